# run79: the fused ops at few rows (row spreading, the norms' short walk, SwiGLU segments,
# RoPE head groups and partial rotary) and LayerNorm, first on a GPU. Bundles built here:
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run79a      (commit a010cab)
#   CUBINS_ARCHS="90" cargo xtask gpu-bundle --out .devcarry/run78z          (the baseline, 3734087,
#   repacked with benches/fused, its line of BINARIES.sha256 kept)
# There, with .devcarry carried: bash .devcarry/run79.sh
set -u
R=/tmp/r79; mkdir -p $R/tests $R/torch
pack() { (cd /tmp && tar czf $OUT/r79.tar.gz r79); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-565}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
cat $R/nvidia-smi.csv
declare -A N=([a]=9 [z]=8)
for b in a z; do
  B=.devcarry/run7${N[$b]}$b; D=/tmp/b79$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=/tmp/b79a; Z=/tmp/b79z
# 1. every GPU test of the new bundle but GEMM's (no GEMM kernel changed); the fused digest
#    gate after recording (recorder first, its lines merged into the file the test binary
#    reads at its build path, then the gate in a new process)
for exe in $A/tests/*; do
  n=$(basename $exe); [ $n = gpu_gemm ] && continue
  timeout $(t 60) $exe --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/$n.log 2>&1
  echo "$n rc=$? $(grep -h 'test result' $R/tests/$n.log | tail -1)"
done
grep -h "^test .*FAILED\|panicked at" $R/tests/*.log | head -20
DIG=/work/main/tests/digests/fused.txt; mkdir -p $(dirname $DIG)
[ -f $DIG ] || cp tests/digests/fused.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/fused.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
tail -1 $R/digest-merge.log; cp $R/fused-digests.txt $DIG
timeout $(t 60) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
echo "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"; el tests
pack
# 2. torch eager and torch.compile at the few-row grid (graph replay, the crate's rotation)
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
a = json.load(open("/tmp/r79/torch/compile.json")); b = json.load(open("/tmp/r79/torch/eager.json"))
a["results"] += b["results"]; a["merged_from"] = ["compile.json", "eager.json"]
json.dump(a, open("/tmp/r79/torch_grid.json", "w"), indent=1)
print("merged", len(a["results"]))
PY
rm -rf $R/torch/*.parts
pack
# 3. the crate's grid at the same rows, judged against both torch modes
export CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=$ROWS CUBINS_FUSED_GRID_COLS=$COLS CUBINS_TORCH_FUSED_JSON=$R/torch_grid.json
timeout $(t 110) $A/benches/fused --results $R/fused-new > $R/fused-new.log 2>&1; el "fused new rc=$?"
grep -cE "^CHECK PASS" $R/fused-new.log; grep -cE "^CHECK FAIL" $R/fused-new.log
pack
# 4. memcheck and racecheck on the changed kernels' parity gates
for tool in memcheck racecheck; do
  timeout $(t 35) compute-sanitizer --tool $tool --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact row_ops_match_the_reference_bf16 rope_matches_the_reference layernorm::layernorm_matches_the_reference --test-threads=1 > $R/$tool.log 2>&1
  el "$tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|test result' $R/$tool.log | tr '\n' ' ')"
done
pack
# 5. the baseline's grid at the same cells (the same torch readings)
timeout $(t 100) $Z/benches/fused --results $R/fused-base > $R/fused-base.log 2>&1; el "fused base rc=$?"
grep -cE "^CHECK PASS" $R/fused-base.log; grep -cE "^CHECK FAIL" $R/fused-base.log
pack; ls -la $OUT
