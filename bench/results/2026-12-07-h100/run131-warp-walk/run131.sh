# run131: b131 (branch lean-walk at ecc3594: the forward norms' warp walk, LayerNorm widened to its
# 32 threads where the selector gave 16; parity at 50 x 392 and 9000 x 528, digests at both)
# against main (b128: the kernels and selector of main f3e78a0), in order of need (LIMIT cuts the
# last steps first):
# 0. GATES=0 skips step 1.
# 1. gpu_fused (every test, the digest gate skipped), the record merged, the digest gate in a
#    second process; racecheck and memcheck over the bf16 row ops; gpu_graphs;
# 2. A/B, b128 and b131 alternating in separate processes (graph replay): RMSNorm and LayerNorm
#    forwards and RMSNorm's residual form (a control: its kernel is untouched) at rows 1024,
#    4000, 16384, 32768 x cols 512, 768, 1024, 2048;
# 3. torch eager and torch.compile at rows 1024, 4000, 16384, 32768 x cols 768, 1024, 2048;
# 4. the second A/B round;
# 5. ncu: RMSNorm and LayerNorm forwards at 16384 x 768 on b131, torch.compile's RMSNorm there.
#   git checkout lean-walk && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b131
# There, with .devcarry carried: LIMIT=... bash .devcarry/run131.sh
set -u
R=/tmp/r131; mkdir -p $R/tests $R/torch
pack() { (cd /tmp && tar czf $OUT/r131.tar.gz r131); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-530}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b131 b128; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  [ -x $D/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $D; }
  (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=/tmp/b131; Z=/tmp/b128
el "bundles ready"
# 1. gates
if [ "${GATES:-1}" = 1 ]; then
timeout $(t 150) $A/tests/gpu_fused --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/gpu_fused.log 2>&1
el "gpu_fused rc=$? $(grep -h 'test result' $R/tests/gpu_fused.log | tail -1)"
grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/gpu_fused.log | head -30 | cut -c1-400
grep -h "walk=warp" $R/tests/gpu_fused.log | head -4 | cut -c1-300
DIG=/work/main/tests/digests/fused.txt; mkdir -p $(dirname $DIG); cp tests/digests/fused.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/fused.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
tail -8 $R/digest-merge.log; cp $R/fused-digests.txt $DIG
timeout $(t 60) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"
timeout $(t 60) compute-sanitizer --tool racecheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact row_ops_match_the_reference_bf16 --test-threads=1 > $R/racecheck.log 2>&1
el "racecheck rc=$? $(grep -h 'RACECHECK SUMMARY\|test result' $R/racecheck.log | tr '\n' ' ')"
timeout $(t 60) compute-sanitizer --tool memcheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact row_ops_match_the_reference_bf16 --test-threads=1 > $R/memcheck.log 2>&1
el "memcheck rc=$? $(grep -h 'ERROR SUMMARY\|test result' $R/memcheck.log | tr '\n' ' ')"
timeout $(t 40) $A/tests/gpu_graphs --include-ignored --test-threads=1 --show-output > $R/tests/gpu_graphs.log 2>&1
el "gpu_graphs rc=$? $(grep -h 'test result' $R/tests/gpu_graphs.log | tail -1)"
fi
pack
# 2. A/B
export CUBINS_FUSED_GRID=1
run() { timeout $(t $3) $2/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
export CUBINS_FUSED_GRID_ROWS=1024,4000,16384,32768 CUBINS_FUSED_GRID_COLS=768,2048,3072 CUBINS_FUSED_GRID_OPS=rmsnorm_fwd,layernorm_fwd,rmsnorm_fwd_residual
run base1 $Z 35
run new1 $A 35
pack
# 3. torch
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor
( PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout $(( $(t 90) - 8 )) python3 benches/torch_fused.py $R/torch/mid.json --grid --compile --graph --jobs 4 --rows 1024,4000,16384,32768 --cols 768,2048 --ops rmsnorm_fwd,layernorm_fwd > $R/torch/mid.log 2>&1; echo "rc=$?" >> $R/torch/mid.log )
pkill -f torch_fused.py; sleep 1
[ -f $R/torch/mid.json ] || python3 benches/torch_fused.py $R/torch/mid.json --grid --compile --assemble >> $R/torch/mid.log 2>&1
el "torch $(tail -1 $R/torch/mid.log)"; rm -rf $R/torch/*.parts
pack
# 4. second round
run new2 $A 35
run base2 $Z 35
unset CUBINS_FUSED_GRID_ROWS CUBINS_FUSED_GRID_COLS CUBINS_FUSED_GRID_OPS
pack
# 5. ncu at 16384 x 768
if [ "${NCU:-1}" = 1 ]; then
SEC="--section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section SpeedOfLight --section InstructionStats"
export CUBINS_FUSED_GRID_COLS=768 CUBINS_FUSED_GRID_ROWS=16384
for op in rmsnorm_fwd layernorm_fwd; do
  CUBINS_FUSED_GRID_OPS=$op timeout $(t 30) ncu --clock-control none -k regex:${op}_bf16 --launch-skip 20 -c 1 $SEC $A/benches/fused --results $R/ncu-$op > $R/ncu-$op-b131.log 2>&1
  el "ncu $op b131 rc=$?"
done
timeout $(t 50) ncu --clock-control none --nvtx --nvtx-include timed/ -k regex:triton -c 1 $SEC python3 .devcarry/ncu_compile.py 16384 768 > $R/ncu-rmsnorm_fwd-compile.log 2>&1
el "ncu compile rc=$?"
fi
(cd /tmp && find inductor \( -name '*.py' -o -name '*.best_config' \) -print0 | tar czf $OUT/inductor.tar.gz --null -T -)
pack; ls -la $OUT
