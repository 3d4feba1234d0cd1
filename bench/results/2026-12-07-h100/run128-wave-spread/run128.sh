# run128: b128 (branch wave-spread: main + the forward norms' and softmax's spread budget of a wave,
# 1024 threads per SM instead of 512; parity at 1024 x 2048 and 4000 x 768, digests at 1024 x 2048)
# against main (b126), in order of need (the call's LIMIT cuts the last steps first):
# 1. gpu_fused (every test, the digest gate skipped), the record merged, the digest gate in a
#    second process;
# 2. the cells, b126 and b128 alternating in separate processes (graph replay): the forward norms
#    (with and without residual), softmax forward and backward at rows 100, 1024, 4000, 16384 x
#    cols 768, 2048, 3072, 8192;
# 3. racecheck and memcheck over the row ops' parity (bf16);
# 4. the second round of 2, gpu_graphs;
# 5. experiments against b128 (slim bundles: gpu_fused and the fused bench only): b129, the RMSNorm
#    forward at 256 threads a block, 6 blocks an SM; b130, the forward norms' lean walk;
# 6. torch eager and torch.compile at the cells of 2 (cols 768, 2048, 8192), inductor's code kept;
# 7. ncu: LayerNorm forward at 100 x 768 on b126 and b127 (the medium walk); RMSNorm forward at
#    16384 x 768 on b128 and torch.compile.
#   git checkout wave-spread && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b128
# There, with .devcarry carried: LIMIT=... bash .devcarry/run128.sh
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
# 5. the second round, graphs
run new2 $A 45
run base2 $Z 45
unset CUBINS_FUSED_GRID_ROWS CUBINS_FUSED_GRID_COLS CUBINS_FUSED_GRID_OPS CUBINS_FUSED_GRID
timeout $(t 50) $A/tests/gpu_graphs --include-ignored --test-threads=1 --show-output > $R/tests/gpu_graphs.log 2>&1
el "gpu_graphs rc=$? $(grep -h 'test result' $R/tests/gpu_graphs.log | tail -1)"
pack
# 8. experiments against b128: b129 (rmsnorm_fwd at 256 threads a block, 6 blocks an SM, 4 resident
#    chunks), b130 (the forward norms' lean walk for aligned rows of <= 32 threads)
for b in b129 b130; do
  D=/tmp/$b; mkdir -p $D; [ -x $D/benches/fused ] || { xz -dc .devcarry/$b/payload.tar.xz | tar -xf - -C $D; }
  (cd $D && sha256sum --quiet -c "$OLDPWD/.devcarry/$b/BINARIES.sha256") && echo "bundle $b verified"; cp .devcarry/$b/BUILD.txt $R/bundle-$b-BUILD.txt
  if [ $b = b130 ]; then
    timeout $(t 40) $D/tests/gpu_fused --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/gpu_fused-$b.log 2>&1
    el "$b gpu_fused rc=$? $(grep -h 'test result' $R/tests/gpu_fused-$b.log | tail -1)"
    python3 .devcarry/merge_digests.py $R/fused-digests.txt $R/tests/gpu_fused-$b.log $R/fused-digests-$b.txt > $R/digest-merge-$b.log; tail -4 $R/digest-merge-$b.log
  else
    timeout $(t 30) $D/tests/gpu_fused --include-ignored --exact row_ops_match_the_reference_bf16 --test-threads=1 > $R/tests/gpu_fused-$b.log 2>&1
    el "$b parity rc=$? $(grep -h 'test result' $R/tests/gpu_fused-$b.log)"
  fi
done
export CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1024,4000,16384,32768 CUBINS_FUSED_GRID_COLS=768,2048 CUBINS_FUSED_GRID_OPS=rmsnorm_fwd,layernorm_fwd
run exp-a1 /tmp/b128 20; run exp-b1 /tmp/b129 20; run exp-c1 /tmp/b130 20
run exp-c2 /tmp/b130 20; run exp-b2 /tmp/b129 20; run exp-a2 /tmp/b128 20
CUBINS_FUSED_SWEEP=1 run exp-sweep-a /tmp/b128 30
CUBINS_FUSED_SWEEP=1 run exp-sweep-c /tmp/b130 30
unset CUBINS_FUSED_GRID_ROWS CUBINS_FUSED_GRID_COLS CUBINS_FUSED_GRID_OPS
pack
# 4. torch
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor
( PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout $(( $(t 75) - 8 )) python3 benches/torch_fused.py $R/torch/mid.json --grid --compile --graph --jobs 4 --rows 100,1024,4000,16384 --cols 768,2048,8192 --ops $OPS > $R/torch/mid.log 2>&1; echo "rc=$?" >> $R/torch/mid.log )
pkill -f torch_fused.py; sleep 1
[ -f $R/torch/mid.json ] || python3 benches/torch_fused.py $R/torch/mid.json --grid --compile --assemble >> $R/torch/mid.log 2>&1
el "torch $(tail -1 $R/torch/mid.log)"; rm -rf $R/torch/*.parts
(cd /tmp && find inductor \( -name '*.py' -o -name '*.best_config' \) -print0 | tar czf $OUT/inductor.tar.gz --null -T -); ls -la $OUT/inductor.tar.gz
pack
mkdir -p $R/ab; cat $R/fused-new1.log $R/fused-new2.log > $R/ab/fused-new.log; cat $R/fused-base1.log $R/fused-base2.log > $R/ab/fused-base.log; cp $R/torch/mid.json $R/ab/torch_grid.json
python3 .devcarry/summarize78.py $R/ab > $R/summary.txt 2>&1; tail -n 12 $R/summary.txt
pack
# 6. ncu stall reasons of layernorm_fwd_bf16 at 100 x 768: main (b126) and the medium walk (b127)
if [ -d .devcarry/b127 ]; then
  D=/tmp/b127; mkdir -p $D; [ -x $D/benches/fused ] || { xz -dc .devcarry/b127/payload.tar.xz | tar -xf - -C $D; }
  export CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=100 CUBINS_FUSED_GRID_COLS=768 CUBINS_FUSED_GRID_OPS=layernorm_fwd
  for b in b126 b127; do
    timeout $(t 35) ncu --clock-control none -k regex:layernorm_fwd_bf16 --launch-skip 20 -c 2 --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section SpeedOfLight /tmp/$b/benches/fused --results $R/ncu-$b > $R/ncu-$b.log 2>&1
    el "ncu $b rc=$? $(grep -c 'Stall\|stall' $R/ncu-$b.log) stall lines"
  done
fi
# 7. ncu: ours (b128) and torch.compile's kernel at rmsnorm_fwd 16384 x 768 and 4000 x 768
SEC="--section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section SpeedOfLight"
export CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_COLS=768 CUBINS_FUSED_GRID_OPS=rmsnorm_fwd
for rows in 16384; do
  CUBINS_FUSED_GRID_ROWS=$rows timeout $(t 30) ncu --clock-control none -k regex:rmsnorm_fwd_bf16 --launch-skip 20 -c 2 $SEC /tmp/b128/benches/fused --results $R/ncu-rms-$rows > $R/ncu-rms-$rows-b128.log 2>&1
  el "ncu rms $rows b128 rc=$?"
  TORCHINDUCTOR_CACHE_DIR=/tmp/inductor timeout $(t 50) ncu --clock-control none --nvtx --nvtx-include timed/ -k regex:triton -c 2 $SEC python3 .devcarry/ncu_compile.py $rows 768 > $R/ncu-rms-$rows-compile.log 2>&1
  el "ncu rms $rows compile rc=$?"
done
pack; ls -la $OUT
