# run113: the LayerNorm backward's rows past a resident tile streamed a chunk at a time,
# prefetching the next row (b113) against the landed state (b112, 77360e8): gates
# (gpu_fused with the digest gate in a second process, memcheck and racecheck over the
# LayerNorm backward's parity test), then layernorm_bwd at rows 100, 1024, 4000, 16384 x
# cols 2048, 8192, 14336, 20000 (new, base, new, base) and torch eager / torch.compile at the same cells.
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b113
# There, with .devcarry carried: bash .devcarry/run113.sh
set -u
R=/tmp/r113; mkdir -p $R/tests $R/torch
pack() { (cd /tmp && tar czf $OUT/r113.tar.gz r113); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-570}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b113 b112; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  [ -x $D/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $D; }
  (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=/tmp/b113; Z=/tmp/b112
# 1. gates
for n in gpu_fused gpu_graphs; do
  timeout $(t 170) $A/tests/$n --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/$n.log 2>&1
  el "$n rc=$? $(grep -h 'test result' $R/tests/$n.log | tail -1)"
done
grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/*.log | head -30 | cut -c1-400
grep -h "8192x20000\|8192x14336" $R/tests/gpu_fused.log | head -4 | cut -c1-300
DIG=/work/main/tests/digests/fused.txt; mkdir -p $(dirname $DIG); cp tests/digests/fused.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/fused.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
tail -12 $R/digest-merge.log; cp $R/fused-digests.txt $DIG
timeout $(t 60) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"
pack
# 2. the changed op: new, base, new, base
export CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=100,1024,4000,16384 CUBINS_FUSED_GRID_COLS=2048,8192,14336,20000 CUBINS_FUSED_GRID_OPS=layernorm_bwd
for round in 1 2; do
  timeout $(t 60) $A/benches/fused --results $R/new$round > $R/fused-new$round.log 2>&1; el "new $round rc=$?"
  timeout $(t 60) $Z/benches/fused --results $R/base$round > $R/fused-base$round.log 2>&1; el "base $round rc=$?"
done
cp $R/fused-new1.log $R/fused-new.log; cp $R/fused-base1.log $R/fused-base.log
grep -h "^  layernorm_bwd" $R/fused-new*.log $R/fused-base*.log | cut -c1-120
pack
( PYTHONUNBUFFERED=1 timeout $(( $(t 120) - 8 )) python3 benches/torch_fused.py $R/torch/compile.json --grid --compile --graph --jobs 2 --rows 100,1024,4000,16384 --cols 2048,8192,14336,20000 --ops layernorm_bwd > $R/torch/compile.log 2>&1; echo "rc=$?" >> $R/torch/compile.log )
pkill -f torch_fused.py; sleep 1
[ -f $R/torch/compile.json ] || python3 benches/torch_fused.py $R/torch/compile.json --grid --compile --assemble >> $R/torch/compile.log 2>&1
el "torch $(tail -1 $R/torch/compile.log)"
rm -rf $R/torch/*.parts; cp $R/torch/compile.json $R/torch_grid.json
python3 .devcarry/summarize78.py $R > $R/summary.txt 2>&1; cat $R/summary.txt
pack
# 3. sanitizers over the LayerNorm backward's parity test
for tool in memcheck racecheck; do
  timeout $(t 90) compute-sanitizer --tool $tool --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact layernorm::layernorm_backward_matches_the_reference > $R/$tool.log 2>&1
  el "$tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|test result' $R/$tool.log | tr '\n' ' ')"
done
pack; ls -la $OUT
