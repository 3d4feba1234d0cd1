# run110: the backward's column sums written a 16-byte chunk at a time and the softmax
# forward's few rows spread to a chunk a thread (b110), on top of run108's one-launch backward: gates (gpu_fused with the digests gated, gpu_graphs, memcheck and
# racecheck over the one-launch test), the backward norms and softmax at few rows against main (b104)
# alternating twice, torch.compile and eager at the same cells, and ncu of the LayerNorm
# backward at 1 x 768 and 1 x 8192.
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b110   (this change)
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b104   (main, 647243c)
# There, with .devcarry carried: bash .devcarry/run109.sh
set -u
R=/tmp/r110; mkdir -p $R/tests $R/torch
pack() { (cd /tmp && tar czf $OUT/r110.tar.gz r110); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-380}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b110 b104; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  [ -x $D/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $D; }
  (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=/tmp/b110; Z=/tmp/b104
# 1. gates
for n in gpu_fused gpu_graphs; do
  timeout $(t 150) $A/tests/$n --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/$n.log 2>&1
  el "$n rc=$? $(grep -h 'test result' $R/tests/$n.log | tail -1)"
done
grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/*.log | head -30 | cut -c1-400
grep -h "one launch\|sums=direct" $R/tests/gpu_fused.log | head -4 | cut -c1-300
DIG=/work/main/tests/digests/fused.txt; mkdir -p $(dirname $DIG); cp tests/digests/fused.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/fused.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
tail -30 $R/digest-merge.log; cp $R/fused-digests.txt $DIG
timeout $(t 60) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"
pack
for tool in memcheck racecheck; do
  timeout $(t 70) compute-sanitizer --tool $tool --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact backward_norms_of_few_short_rows_take_one_launch > $R/$tool.log 2>&1
  el "$tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|test result' $R/$tool.log | tr '\n' ' ')"
done
pack
# 2. the changed ops at few rows: new, base, new, base
export CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1,2,5,16
OPS=rmsnorm_bwd,layernorm_bwd,softmax_fwd
for round in 1 2; do
  CUBINS_FUSED_GRID_COLS=768,2048,8192 CUBINS_FUSED_GRID_OPS=$OPS timeout $(t 60) $A/benches/fused --results $R/new$round > $R/fused-new$round.log 2>&1; el "new $round rc=$?"
  CUBINS_FUSED_GRID_COLS=768,2048,8192 CUBINS_FUSED_GRID_OPS=$OPS timeout $(t 60) $Z/benches/fused --results $R/base$round > $R/fused-base$round.log 2>&1; el "base $round rc=$?"
done
cp $R/fused-new1.log $R/fused-new.log; cp $R/fused-base1.log $R/fused-base.log
pack
( PYTHONUNBUFFERED=1 timeout $(( $(t 200) - 10 )) python3 benches/torch_fused.py $R/torch/compile.json --grid --compile --graph --jobs 14 --rows 1,2,5,16 --cols 768,2048,8192 --ops $OPS > $R/torch/compile.log 2>&1; echo "rc=$?" >> $R/torch/compile.log )
pkill -f torch_fused.py; sleep 1
[ -f $R/torch/compile.json ] || python3 benches/torch_fused.py $R/torch/compile.json --grid --compile --assemble >> $R/torch/compile.log 2>&1
el "torch compile $(tail -1 $R/torch/compile.log)"
rm -rf $R/torch/*.parts
pack
# 3. ncu per kernel: the backward norms at 1 x 768 and 1 x 8192, main and this change
M=gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
for b in b110; do for op in layernorm_bwd rmsnorm_bwd; do for c in 768 8192; do
  [ $(t 30) -lt 25 ] && break 3
  CUBINS_FUSED_GRID_OPS=$op CUBINS_FUSED_GRID_ROWS=1 CUBINS_FUSED_GRID_COLS=$c timeout $(t 30) \
    ncu --clock-control none --cache-control none --metrics $M -k "regex:(rmsnorm|layernorm)_(bwd|dweight)" -c 4 --csv \
    /tmp/$b/benches/fused --results $R/ncu-b > $R/ncu-$b-$op-1x$c.csv 2> $R/ncu-$b-$op-1x$c.err
  el "ncu $b $op 1x$c rc=$?"
done; done; done
pack; ls -la $OUT
