# run133: b133 (branch short-walk at f2cd759: the forward norms' rows the warp walk does not hold
# widened to the short walk's 2 chunks a thread, up to 128 threads for RMSNorm, 192 for the
# residual forms; the torch bench's outputs rotated) against main (b131: the kernels and selector
# of main ab82363), in order of need (LIMIT cuts the last steps first):
# 1. gpu_fused (every test, the digest gate skipped), the record merged, the digest gate in a
#    second process; racecheck and memcheck over the bf16 row ops; gpu_graphs;
# 2. A/B, b131 and b133 alternating in separate processes (graph replay): the four forward norms
#    at rows 1024, 4000, 16384, 32768 x cols 768, 2048, 3072, 8192;
# 3. torch eager and torch.compile at rows 4000, 16384, 32768 x cols 768, 2048: the bench with
#    outputs rotated, and as on main (each call's output dropped at once: torch_fused_main.py);
# 4. the second A/B round.
#   git checkout short-walk && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b133
# There, with .devcarry carried: LIMIT=... bash .devcarry/run133.sh
set -u
R=/tmp/r133; mkdir -p $R/tests $R/torch
pack() { (cd /tmp && tar czf $OUT/r133.tar.gz r133); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-530}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b133 b131; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  [ -x $D/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $D; }
  (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=/tmp/b133; Z=/tmp/b131
el "bundles ready"
# 1. gates
timeout $(t 150) $A/tests/gpu_fused --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/gpu_fused.log 2>&1
el "gpu_fused rc=$? $(grep -h 'test result' $R/tests/gpu_fused.log | tail -1)"
grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/gpu_fused.log | head -30 | cut -c1-400
grep -h "^STAMP.*9000" $R/tests/gpu_fused.log | head -6 | cut -c1-60,200-330
DIG=/work/main/tests/digests/fused.txt; mkdir -p $(dirname $DIG); cp tests/digests/fused.txt $R/fused-digests-main.txt
python3 .devcarry/merge_digests.py $R/fused-digests-main.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
tail -8 $R/digest-merge.log; cp $R/fused-digests.txt $DIG
timeout $(t 60) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"
timeout $(t 60) compute-sanitizer --tool racecheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact row_ops_match_the_reference_bf16 --test-threads=1 > $R/racecheck.log 2>&1
el "racecheck rc=$? $(grep -h 'RACECHECK SUMMARY\|test result' $R/racecheck.log | tr '\n' ' ')"
timeout $(t 60) compute-sanitizer --tool memcheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact row_ops_match_the_reference_bf16 --test-threads=1 > $R/memcheck.log 2>&1
el "memcheck rc=$? $(grep -h 'ERROR SUMMARY\|test result' $R/memcheck.log | tr '\n' ' ')"
timeout $(t 40) $A/tests/gpu_graphs --include-ignored --test-threads=1 --show-output > $R/tests/gpu_graphs.log 2>&1
el "gpu_graphs rc=$? $(grep -h 'test result' $R/tests/gpu_graphs.log | tail -1)"
pack
# 2. A/B
export CUBINS_FUSED_GRID=1
run() { timeout $(t $3) $2/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
export CUBINS_FUSED_GRID_ROWS=1024,4000,16384,32768 CUBINS_FUSED_GRID_COLS=768,2048,3072,8192 CUBINS_FUSED_GRID_OPS=rmsnorm_fwd,layernorm_fwd,rmsnorm_fwd_residual,layernorm_fwd_residual
run base1 $Z 50
run new1 $A 50
pack
# 3. torch, with outputs rotated and as on main
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor
TOPS=rmsnorm_fwd,layernorm_fwd,rmsnorm_fwd_residual,layernorm_fwd_residual
for v in rotated main; do
  S=benches/torch_fused.py; [ $v = main ] && S=.devcarry/torch_fused_main.py
  ( PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout $(( $(t 90) - 8 )) python3 $S $R/torch/$v.json --grid --compile --graph --jobs 4 --rows 4000,16384,32768 --cols 768,2048 --ops $TOPS > $R/torch/$v.log 2>&1; echo "rc=$?" >> $R/torch/$v.log )
  pkill -f torch_fused; sleep 1
  [ -f $R/torch/$v.json ] || python3 $S $R/torch/$v.json --grid --compile --assemble >> $R/torch/$v.log 2>&1
  el "torch $v $(tail -1 $R/torch/$v.log)"; rm -rf $R/torch/*.parts
done
cp $R/torch/rotated.json $R/torch/mid.json
pack
# 4. second round
run new2 $A 50
run base2 $Z 50
unset CUBINS_FUSED_GRID_ROWS CUBINS_FUSED_GRID_COLS CUBINS_FUSED_GRID_OPS
(cd /tmp && find inductor \( -name '*.py' -o -name '*.best_config' \) -print0 | tar czf $R/inductor.tar.gz --null -T -)
pack; ls -la $OUT
