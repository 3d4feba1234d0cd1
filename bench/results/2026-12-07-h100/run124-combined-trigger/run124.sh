# run124: one bundle b124 (branch combined-124: main + layernorm-bwd-cluster 3b8f7cd + bwd-combined
# 98a60b0 + swiglu-full-grid 0af3592; each changes its own kernels) against main (b114):
# 1. gpu_fused (every test, the digest gate skipped), the record merged, the digest gate in a
#    second process, gpu_graphs;
# 2. racecheck and memcheck over both backward parity tests (packed row groups, cluster halves);
# 3. the changed cells, b124 then b114 (separate processes, graph replay): the backward norms at
#    100..16384 rows x 768..14336 cols, swiglu_fwd at 1..16384 x 768..32768, layernorm_bwd at
#    20000 / 32768 cols (refused past 29 007 on main);
# 4. torch eager and torch.compile at the LayerNorm backward's wide cells.
#   git checkout combined-124 && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b124
# There, with .devcarry carried: bash .devcarry/run124.sh
set -u
R=/tmp/r124; mkdir -p $R/tests $R/torch
pack() { (cd /tmp && tar czf $OUT/r124.tar.gz r124); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-585}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b124 b114; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  [ -x $D/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $D; }
  (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=/tmp/b124; Z=/tmp/b114
el "bundles ready"
# 1. gates
timeout $(t 150) $A/tests/gpu_fused --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/gpu_fused.log 2>&1
el "gpu_fused rc=$? $(grep -h 'test result' $R/tests/gpu_fused.log | tail -1)"
grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/gpu_fused.log | head -30 | cut -c1-400
grep -h "^8192x\|^4096x32768\|^1024x768" $R/tests/gpu_fused.log | cut -c1-300
DIG=/work/main/tests/digests/fused.txt; mkdir -p $(dirname $DIG); cp tests/digests/fused.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/fused.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
tail -12 $R/digest-merge.log; cp $R/fused-digests.txt $DIG
timeout $(t 60) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"
timeout $(t 60) $A/tests/gpu_graphs --include-ignored --test-threads=1 --show-output > $R/tests/gpu_graphs.log 2>&1
el "gpu_graphs rc=$? $(grep -h 'test result' $R/tests/gpu_graphs.log | tail -1)"
pack
# 2. sanitizers
BW="rmsnorm_backward_matches_the_reference layernorm::layernorm_backward_matches_the_reference"
timeout $(t 120) compute-sanitizer --tool racecheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact $BW --test-threads=1 > $R/racecheck.log 2>&1
el "racecheck rc=$? $(grep -h 'RACECHECK SUMMARY\|test result' $R/racecheck.log | tr '\n' ' ')"
pack
timeout $(t 100) compute-sanitizer --tool memcheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact $BW --test-threads=1 > $R/memcheck.log 2>&1
el "memcheck rc=$? $(grep -h 'ERROR SUMMARY\|test result' $R/memcheck.log | tr '\n' ' ')"
pack
# 3. the changed cells against main
export CUBINS_FUSED_GRID=1
run() { timeout $(t $3) $2/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
BR=100,1024,4000,16384; BC=768,2048,8192,14336
CUBINS_FUSED_GRID_ROWS=$BR CUBINS_FUSED_GRID_COLS=$BC CUBINS_FUSED_GRID_OPS=rmsnorm_bwd,layernorm_bwd run bwd-new $A 60
CUBINS_FUSED_GRID_ROWS=$BR CUBINS_FUSED_GRID_COLS=$BC CUBINS_FUSED_GRID_OPS=rmsnorm_bwd,layernorm_bwd run bwd-base $Z 60
SR=1,2,5,16,100,1024,4000,16384; SC=768,2048,8192,14336,32768
CUBINS_FUSED_GRID_ROWS=$SR CUBINS_FUSED_GRID_COLS=$SC CUBINS_FUSED_GRID_OPS=swiglu_fwd run swiglu-new $A 40
CUBINS_FUSED_GRID_ROWS=$SR CUBINS_FUSED_GRID_COLS=$SC CUBINS_FUSED_GRID_OPS=swiglu_fwd run swiglu-base $Z 40
CUBINS_FUSED_GRID_ROWS=1,2,5,16,100,1024,4000,16384 CUBINS_FUSED_GRID_COLS=20000,32768 CUBINS_FUSED_GRID_OPS=layernorm_bwd run ln-new $A 40
CUBINS_FUSED_GRID_ROWS=1,2,5,16,100,1024,4000,16384 CUBINS_FUSED_GRID_COLS=20000 CUBINS_FUSED_GRID_OPS=layernorm_bwd run ln-base $Z 30
pack
# 4. torch at the LayerNorm backward's wide cells
( PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout $(( $(t 120) - 8 )) python3 benches/torch_fused.py $R/torch/ln.json --grid --compile --graph --jobs 2 --rows 1,2,5,16,100,1024,4000,16384 --cols 20000,32768 --ops layernorm_bwd > $R/torch/ln.log 2>&1; echo "rc=$?" >> $R/torch/ln.log )
pkill -f torch_fused.py; sleep 1
[ -f $R/torch/ln.json ] || python3 benches/torch_fused.py $R/torch/ln.json --grid --compile --assemble >> $R/torch/ln.log 2>&1
el "torch $(tail -1 $R/torch/ln.log)"; rm -rf $R/torch/*.parts
for p in bwd swiglu ln; do mkdir -p $R/ab-$p; cp $R/fused-$p-new.log $R/ab-$p/fused-new.log; cp $R/fused-$p-base.log $R/ab-$p/fused-base.log; done
cp $R/torch/ln.json $R/ab-ln/torch_grid.json; for p in bwd swiglu; do echo '{"results": []}' > $R/ab-$p/torch_grid.json; done
for p in bwd swiglu ln; do python3 .devcarry/summarize78.py $R/ab-$p > $R/summary-$p.txt 2>&1; tail -n 14 $R/summary-$p.txt; done
pack; ls -la $OUT
