# run81: decode explorer (src: .devcarry/decode/decode_explore.cu, built here with its Makefile)
# against cuBLAS: the crate's decode kernel at other tile parameters, a staged (cp.async ring +
# ldmatrix, K split to fill the SMs) kernel, and a linear read ceiling.
# There, with .devcarry carried: bash .devcarry/run81.sh
set -u
R=$OUT; X=.devcarry/decode/decode_explore
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-380}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
sha256sum $X > $R/binary.sha256; cat $R/binary.sha256
L=$(dirname "$(find /usr /opt /root -name 'libcublas.so.13*' 2>/dev/null | head -1)")
echo "cuBLAS dir: $L"; export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-}
S=""
for nk in 28672:4096 14336:4096 28672:28672 8192:8192 4096:4096 4096:28672 14336:14336 28672:8192; do
  for m in 1 16; do S="$S LAY $m ${nk%%:*} ${nk##*:}"; done
done
for lay in NN NT; do
  timeout $(t $([ $lay = NN ] && echo 150 || echo 110)) $X ${S//LAY/$lay} > $R/explore_$lay.log 2>&1; el "$lay rc=$?"
  grep -h "^ROW" $R/explore_$lay.log | awk '{print $2,$3,$4,$5,$6,$9,$10,$11,$12,$16,$17}' | column -t
done
for c in crate_nn_w8u2; do
  DX_CONFIGS=$c timeout $(t 30) ncu --clock-control none --launch-count 1 -k regex:"crate|staged|read" --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats $X NN 1 28672 4096 > $R/ncu_$c.log 2>&1; el "ncu $c rc=$?"
done
grep -h "DRAM Throughput\|Memory Throughput\|Achieved Occupancy\|Duration" $R/ncu_*.log
# where the few-row kernels spend their 1.4-2.8 us (bundle run79a's fused bench, one row of 768)
D=/tmp/b81; mkdir -p $D; xz -dc .devcarry/run79a/payload.tar.xz | tar -xf - -C $D
CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1 CUBINS_FUSED_GRID_COLS=768 timeout $(t 60) ncu --clock-control none --launch-count 4 -k regex:"(softmax|rmsnorm|layernorm|swiglu)_fwd_bf16" --section SpeedOfLight --section WarpStateStats --section LaunchStats $D/benches/fused --results /tmp/f81 > $R/ncu_fused.log 2>&1; el "ncu fused rc=$?"
ls -la $OUT
