set -u
R=/tmp/r76; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r76.tar.gz r76); }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvidia-smi.txt 2>&1
xz -dk .devcarry/run76/fused.xz && chmod +x .devcarry/run76/fused
sha256sum .devcarry/run76/fused .devcarry/run76/ws_gemm > $R/binaries.sha256
# 1. GEMM epilogue: direct stores (today) vs smem staging + TMA store, paired against cuBLAS.
for lay in NN TN NT; do
  timeout 90 .devcarry/run76/ws_gemm $lay 4096 4096 4096 $lay 4096 14336 4096 $lay 8192 8192 8192 $lay 4096 4096 14336 > $R/gemm_$lay.log 2>&1
  echo "rc=$?" >> $R/gemm_$lay.log
done
grep -h "^ROW" $R/gemm_*.log | awk '{print $2,$3,$4,$5,$6,$12,$16}'
pack
# 2. torch: eager at rows 1,2,5,16; eager + compile at rows 1,16 x 768,8192,32768.
( PYTHONUNBUFFERED=1 timeout 120 python3 benches/torch_fused.py $R/torch_eager.json --grid --graph --jobs 14 --rows 1,2,5,16 --ops rmsnorm_fwd,rmsnorm_fwd_residual,softmax_fwd,swiglu_fwd,swiglu_fwd_interleaved,rmsnorm_bwd,softmax_bwd,rope_neox_hd64,rope_neox_hd80,rope_neox_hd128 > $R/torch_eager.log 2>&1; echo "rc=$?" >> $R/torch_eager.log )
[ -f $R/torch_eager.json ] || python3 benches/torch_fused.py $R/torch_eager.json --grid --assemble >> $R/torch_eager.log 2>&1
( PYTHONUNBUFFERED=1 timeout 200 python3 benches/torch_fused.py $R/torch_compile.json --grid --compile --graph --jobs 14 --rows 1,16 --cols 768,8192,32768 --ops rmsnorm_fwd,rmsnorm_fwd_residual,softmax_fwd,swiglu_fwd,swiglu_fwd_interleaved,rmsnorm_bwd,softmax_bwd,rope_neox_hd64,rope_neox_hd80,rope_neox_hd128 > $R/torch_compile.log 2>&1; echo "rc=$?" >> $R/torch_compile.log )
pkill -f torch_fused.py; sleep 1
[ -f $R/torch_compile.json ] || python3 benches/torch_fused.py $R/torch_compile.json --grid --compile --assemble >> $R/torch_compile.log 2>&1
tail -1 $R/torch_eager.log $R/torch_compile.log
python3 - <<'PY'
import json
a = json.load(open("/tmp/r76/torch_compile.json")); b = json.load(open("/tmp/r76/torch_eager.json"))
a["results"] += b["results"]; a["merged_from"] = ["torch_compile.json", "torch_eager.json"]
json.dump(a, open("/tmp/r76/torch_grid.json", "w"), indent=1)
print("merged", len(a["results"]))
PY
rm -rf $R/*.parts
pack
# 3. The crate's grid at the same rows, judged against both.
CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1,2,5,16 CUBINS_TORCH_FUSED_JSON=$R/torch_grid.json timeout 200 .devcarry/run76/fused --results $R/fused > $R/fused.log 2>&1; echo "fused rc=$?"
grep -cE "^CHECK PASS" $R/fused.log; grep -cE "^CHECK FAIL" $R/fused.log; tail -3 $R/fused.log
pack; ls -la $OUT
