# run86: the fused row kernels as programmatic dependents. Bundles built here:
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b85    (this change)
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/base   (main, e0420bd)
# There, with .devcarry carried: bash .devcarry/run86.sh
set -u
R=/tmp/r86; mkdir -p $R/tests $R/torch
pack() { (cd /tmp && tar czf $OUT/r86.tar.gz r86); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-580}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b85 base; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  [ -x $D/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $D; }
  (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=/tmp/b85; Z=/tmp/base
# 1. every GPU test binary but GEMM's; the fused digests recorded, merged, gated in a second process
for exe in $A/tests/*; do
  n=$(basename $exe); [ $n = gpu_gemm ] && continue
  timeout $(t 60) $exe --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/$n.log 2>&1
  echo "$n rc=$? $(grep -h 'test result' $R/tests/$n.log | tail -1)"
done
grep -h "^test .*FAILED\|panicked at" $R/tests/*.log | head -20
grep -h "launch=programmatic-dependent" $R/tests/gpu_fused.log | head -3 | cut -c1-300
DIG=/work/main/tests/digests/fused.txt; mkdir -p $(dirname $DIG); [ -f $DIG ] || cp tests/digests/fused.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/fused.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
tail -1 $R/digest-merge.log; cp $R/fused-digests.txt $DIG
timeout $(t 60) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
echo "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"; el tests
pack
# 2. memcheck and racecheck on the programmatic launches
for tool in memcheck racecheck; do
  timeout $(t 40) compute-sanitizer --tool $tool --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact row_kernels_launch_as_programmatic_dependents > $R/$tool.log 2>&1
  el "$tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|test result' $R/$tool.log | tr '\n' ' ')"
done
pack
# 3. torch eager and torch.compile at the few-row grid (graph replay, the crate's rotation)
ROWS=1,2,5,16
COLS=768,8192,32768
OPS=rmsnorm_fwd,rmsnorm_fwd_residual,layernorm_fwd,layernorm_fwd_residual,softmax_fwd,swiglu_fwd,swiglu_fwd_interleaved,rmsnorm_bwd,layernorm_bwd,softmax_bwd,rope_neox_hd64,rope_neox_hd80,rope_neox_hd128
( PYTHONUNBUFFERED=1 timeout $(t 50) python3 benches/torch_fused.py $R/torch/eager.json --grid --graph --jobs 8 --rows $ROWS --cols $COLS --ops $OPS > $R/torch/eager.log 2>&1; echo "rc=$?" >> $R/torch/eager.log )
pkill -f torch_fused.py; sleep 1
[ -f $R/torch/eager.json ] || python3 benches/torch_fused.py $R/torch/eager.json --grid --assemble >> $R/torch/eager.log 2>&1
el "torch eager $(tail -1 $R/torch/eager.log)"
( PYTHONUNBUFFERED=1 timeout $(t 140) python3 benches/torch_fused.py $R/torch/compile.json --grid --compile --graph --jobs 14 --rows $ROWS --cols $COLS --ops $OPS > $R/torch/compile.log 2>&1; echo "rc=$?" >> $R/torch/compile.log )
pkill -f torch_fused.py; sleep 1
[ -f $R/torch/compile.json ] || python3 benches/torch_fused.py $R/torch/compile.json --grid --compile --assemble >> $R/torch/compile.log 2>&1
el "torch compile $(tail -1 $R/torch/compile.log)"
python3 - <<'PY'
import json
a = json.load(open("/tmp/r86/torch/compile.json")); b = json.load(open("/tmp/r86/torch/eager.json"))
a["results"] += b["results"]; a["merged_from"] = ["compile.json", "eager.json"]
json.dump(a, open("/tmp/r86/torch_grid.json", "w"), indent=1)
print("merged", len(a["results"]))
PY
rm -rf $R/torch/*.parts
pack
# 4. the crate's grid at the same rows, this change then main, judged against both torch modes
export CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=$ROWS CUBINS_FUSED_GRID_COLS=$COLS CUBINS_TORCH_FUSED_JSON=$R/torch_grid.json
timeout $(t 110) $A/benches/fused --results $R/fused-new > $R/fused-new.log 2>&1; el "fused new rc=$?"
grep -cE "^CHECK PASS" $R/fused-new.log; grep -cE "^CHECK FAIL" $R/fused-new.log
pack
timeout $(t 110) $Z/benches/fused --results $R/fused-base > $R/fused-base.log 2>&1; el "fused base rc=$?"
grep -cE "^CHECK PASS" $R/fused-base.log; grep -cE "^CHECK FAIL" $R/fused-base.log
pack; ls -la $OUT
