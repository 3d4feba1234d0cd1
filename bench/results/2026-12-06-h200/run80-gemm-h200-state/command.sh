# run79g: the GEMM on the H200 as it stands (commit a010cab; TMA kernel with the staged epilogue,
# last measured on an H100 in run77): the random sweep (48 shapes), the decode grid, TF32 and the
# 16-bit large table. Bundle: CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run79a
# There, with .devcarry carried: bash .devcarry/run79g.sh
set -u
R=/tmp/r79g; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r79g.tar.gz r79g); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
t() { local l=$(( 570 - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
B=.devcarry/run79a; cp $B/BUILD.txt $R/bundle-BUILD.txt
# 1. the random sweep, all 48 shapes
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 timeout $(t 250) bash $B/run.sh $R/random bench gemm --quick > $R/random.log 2>&1; el "random rc=$?"
grep -h "^SWEEP" $R/random.log | cut -c1-150
pack
# 2. the decode grid (M 1, 8, 16 x N, K in 4096..28672, NN and NT)
CUBINS_GEMM_DECODE_GRID=1 timeout $(t 150) bash $B/run.sh $R/decode bench gemm > $R/decode.log 2>&1; el "decode rc=$?"
grep -h "speed ratio" $R/decode.log | sed 's/: p50.*speed ratio/:/' | cut -c1-110
pack
# 3. TF32, then bf16 and fp16, the large shapes in every layout
CUBINS_GEMM_TIERS=tf32 timeout $(t 70) bash $B/run.sh $R/tf32 bench gemm > $R/tf32.log 2>&1; el "tf32 rc=$?"
CUBINS_GEMM_TIERS=bf16,fp16 timeout $(t 300) bash $B/run.sh $R/large bench gemm > $R/large.log 2>&1; el "large rc=$?"
grep -h "speed ratio" $R/tf32.log $R/large.log | grep -v "x1x\|x8x\|x16x\|x64x\|x128x" | sed 's/: p50.*speed ratio/:/' | cut -c1-110
grep -hc "^CHECK FAIL" $R/*.log
pack; ls -la $OUT
