# run128: b128 (branch wave-spread: main + the forward norms' and softmax's spread budget of a wave,
# 1024 threads per SM instead of 512; parity at 1024 x 2048 and 4000 x 768, digests at 1024 x 2048)
# against main (b126):
# 1. gpu_fused (every test, the digest gate skipped), the record merged, the digest gate in a
#    second process;
# 2. the cells, b126 and b128 alternating in separate processes (graph replay): the forward norms
#    (with and without residual), softmax forward and backward at rows 100, 1024, 4000, 16384 x
#    cols 768, 2048, 3072, 8192;
# 3. racecheck and memcheck over the row ops' parity (bf16);
# 4. torch eager and torch.compile at those cells (cols 768, 2048, 8192), same call;
# 5. the second round of 2, gpu_graphs.
#   git checkout wave-spread && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b128
# There, with .devcarry carried: bash .devcarry/run128.sh
set -u
R=/tmp/r128; mkdir -p $R/tests $R/torch
pack() { (cd /tmp && tar czf $OUT/r128.tar.gz r128); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-530}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b128 b126; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  [ -x $D/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $D; }
  (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=/tmp/b128; Z=/tmp/b126
el "bundles ready"
# 1. gates
timeout $(t 130) $A/tests/gpu_fused --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/gpu_fused.log 2>&1
el "gpu_fused rc=$? $(grep -h 'test result' $R/tests/gpu_fused.log | tail -1)"
grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/gpu_fused.log | head -30 | cut -c1-400
DIG=/work/main/tests/digests/fused.txt; mkdir -p $(dirname $DIG); cp tests/digests/fused.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/fused.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
tail -6 $R/digest-merge.log; cp $R/fused-digests.txt $DIG
timeout $(t 60) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"
pack
# 2. the cells, alternating
export CUBINS_FUSED_GRID=1
run() { timeout $(t $3) $2/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
OPS=rmsnorm_fwd,rmsnorm_fwd_residual,layernorm_fwd,layernorm_fwd_residual,softmax_fwd,softmax_bwd
export CUBINS_FUSED_GRID_ROWS=100,1024,4000,16384 CUBINS_FUSED_GRID_COLS=768,2048,3072,8192 CUBINS_FUSED_GRID_OPS=$OPS
run base1 $Z 40
run new1 $A 40
pack
# 3. sanitizers
timeout $(t 45) compute-sanitizer --tool racecheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact row_ops_match_the_reference_bf16 --test-threads=1 > $R/racecheck.log 2>&1
el "racecheck rc=$? $(grep -h 'RACECHECK SUMMARY\|test result' $R/racecheck.log | tr '\n' ' ')"
timeout $(t 45) compute-sanitizer --tool memcheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact row_ops_match_the_reference_bf16 --test-threads=1 > $R/memcheck.log 2>&1
el "memcheck rc=$? $(grep -h 'ERROR SUMMARY\|test result' $R/memcheck.log | tr '\n' ' ')"
pack
# 4. torch
( PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout $(( $(t 75) - 8 )) python3 benches/torch_fused.py $R/torch/mid.json --grid --compile --graph --jobs 4 --rows 100,1024,4000,16384 --cols 768,2048,8192 --ops $OPS > $R/torch/mid.log 2>&1; echo "rc=$?" >> $R/torch/mid.log )
pkill -f torch_fused.py; sleep 1
[ -f $R/torch/mid.json ] || python3 benches/torch_fused.py $R/torch/mid.json --grid --compile --assemble >> $R/torch/mid.log 2>&1
el "torch $(tail -1 $R/torch/mid.log)"; rm -rf $R/torch/*.parts
pack
# 5. the second round, graphs
run new2 $A 45
run base2 $Z 45
unset CUBINS_FUSED_GRID_ROWS CUBINS_FUSED_GRID_COLS CUBINS_FUSED_GRID_OPS CUBINS_FUSED_GRID
timeout $(t 50) $A/tests/gpu_graphs --include-ignored --test-threads=1 --show-output > $R/tests/gpu_graphs.log 2>&1
el "gpu_graphs rc=$? $(grep -h 'test result' $R/tests/gpu_graphs.log | tail -1)"
mkdir -p $R/ab; cat $R/fused-new1.log $R/fused-new2.log > $R/ab/fused-new.log; cat $R/fused-base1.log $R/fused-base2.log > $R/ab/fused-base.log; cp $R/torch/mid.json $R/ab/torch_grid.json
python3 .devcarry/summarize78.py $R/ab > $R/summary.txt 2>&1; tail -n 12 $R/summary.txt
pack; ls -la $OUT
