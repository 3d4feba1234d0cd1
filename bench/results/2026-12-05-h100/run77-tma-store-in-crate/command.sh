# run77: the TMA kernel with the staged epilogue (TMA stores), in the crate. Bundle built here:
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run77a
# There, with .devcarry carried: bash .devcarry/run77.sh
set -u
R=/tmp/r77; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r77.tar.gz r77); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
t() { local l=$(( 560 - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
B=.devcarry/run77a; cp $B/BUILD.txt $R/bundle-BUILD.txt; D=/tmp/b77; mkdir -p $D
xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "binaries verified"
# 1. every GEMM GPU test
timeout $(t 150) $D/tests/gpu_gemm --include-ignored --test-threads=1 --show-output > $R/gpu_gemm.log 2>&1; el "gpu_gemm rc=$?"
grep -h "^test \|test result" $R/gpu_gemm.log | grep -v " ok$"; grep -h "test result" $R/gpu_gemm.log
grep -h "^BITS" $R/gpu_gemm.log | cut -c1-160 | head -4
pack
# 2. memcheck and racecheck on the staged epilogue (tails clipped by the copy engine)
for tool in memcheck racecheck; do
  timeout $(t 60) compute-sanitizer --tool $tool --error-exitcode 86 $D/tests/gpu_gemm --include-ignored --exact tma_and_wgmma_kernels_give_the_same_bits > $R/$tool-tma.log 2>&1; el "$tool rc=$?"
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/$tool-tma.log
done
pack
# 3. the GEMM bench, 16-bit tiers, every layout and shape, against cuBLAS
CUBINS_GEMM_TIERS=bf16,fp16 timeout $(t 240) bash $B/run.sh $R/bench bench gemm > $R/bench.log 2>&1; el "bench rc=$?"
grep -h "speed ratio" $R/bench.log | grep -v "x1x\|x8x\|x16x\|x64x\|x128x" | sed 's/: p50.*speed ratio/:/' | cut -c1-90
grep -hc "^CHECK FAIL" $R/bench.log; grep -h "^CHECK FAIL" $R/bench.log | cut -c1-150
pack; ls -la $OUT
