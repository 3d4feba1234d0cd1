# run102: the forward norms split over 8-CTA clusters for a few long rows, and softmax's
# resident rows reduced as max, then sum: gates (gpu_fused, occupancy, graphs), digests,
# sanitizers, then the changed ops at few rows, the crate (bundle b100) then torch eager and
# torch.compile in the same call (graph replay on both sides). Bundle built here:
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b100   (d11370d)
# There, with .devcarry carried: bash .devcarry/run102.sh
set -u
R=/tmp/r102; mkdir -p $R/tests $R/torch
pack() { (cd /tmp && tar czf $OUT/r102.tar.gz r102); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-578}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/b100; A=/tmp/b100; mkdir -p $A; cp $B/BUILD.txt $R/bundle-b100-BUILD.txt
[ -x $A/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $A; }
(cd $A && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle b100 verified"
# 1. gates: the fused tests (digests recorded, merged, gated in a second process), occupancy, graphs
for n in ${TESTS:-gpu_fused gpu_occupancy gpu_graphs}; do
  timeout $(t 150) $A/tests/$n --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/$n.log 2>&1
  el "$n rc=$? $(grep -h 'test result' $R/tests/$n.log | tail -1)"
done
grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/*.log | head -30 | cut -c1-400
grep -h "walk=cluster" $R/tests/gpu_fused.log | head -2 | cut -c1-300
DIG=/work/main/tests/digests/fused.txt; mkdir -p $(dirname $DIG); cp tests/digests/fused.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/fused.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
tail -45 $R/digest-merge.log; cp $R/fused-digests.txt $DIG
timeout $(t 60) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"
pack
for tool in memcheck racecheck; do
  timeout $(t 60) compute-sanitizer --tool $tool --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact row_kernels_launch_as_programmatic_dependents > $R/$tool.log 2>&1
  el "$tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|test result' $R/$tool.log | tr '\n' ' ')"
done
pack
# 2. the crate at few rows, then torch eager and torch.compile at the same cells
ROWS=1,2,5,16
COLS=768,2048,6144,8192,14336,20000,32768
OPS=rmsnorm_fwd,rmsnorm_fwd_residual,layernorm_fwd,layernorm_fwd_residual,softmax_fwd
CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=$ROWS CUBINS_FUSED_GRID_COLS=$COLS CUBINS_FUSED_GRID_OPS=$OPS timeout $(t 120) $A/benches/fused --results $R/fused-new > $R/fused-new.log 2>&1; el "fused new rc=$?"
pack
[ "${SKIP_EAGER:-0}" = 1 ] || ( PYTHONUNBUFFERED=1 timeout $(t 55) python3 benches/torch_fused.py $R/torch/eager.json --grid --graph --jobs 8 --rows $ROWS --cols $COLS --ops $OPS > $R/torch/eager.log 2>&1; echo "rc=$?" >> $R/torch/eager.log )
pkill -f torch_fused.py; sleep 1
[ "${SKIP_EAGER:-0}" = 1 ] || [ -f $R/torch/eager.json ] || python3 benches/torch_fused.py $R/torch/eager.json --grid --assemble >> $R/torch/eager.log 2>&1
el "torch eager $(tail -1 $R/torch/eager.log)"
pack
( PYTHONUNBUFFERED=1 timeout $(( $(t 600) - 12 )) python3 benches/torch_fused.py $R/torch/compile.json --grid --compile --graph --jobs 14 --rows $ROWS --cols $COLS --ops $OPS > $R/torch/compile.log 2>&1; echo "rc=$?" >> $R/torch/compile.log )
pkill -f torch_fused.py; sleep 1
[ -f $R/torch/compile.json ] || python3 benches/torch_fused.py $R/torch/compile.json --grid --compile --assemble >> $R/torch/compile.log 2>&1
el "torch compile $(tail -1 $R/torch/compile.log)"
rm -rf $R/torch/*.parts
pack; ls -la $OUT
