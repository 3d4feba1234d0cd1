# run73 on the H200 (bundle of commit f5045db: the TMA tile selected, split K, the operand
# pass). Bundle built here in a clean clone:
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run73a
# There, with .devcarry/run73.sh and .devcarry/run73a carried: bash .devcarry/run73.sh
set -u
R=/tmp/r73; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r73.tar.gz r73); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
t() { local l=$(( 565 - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
B=.devcarry/run73a; cp $B/BUILD.txt $R/bundle-BUILD.txt; D=/tmp/b73; mkdir -p $D
xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "binaries verified"
# 1. every GEMM GPU test
timeout $(t 150) $D/tests/gpu_gemm --include-ignored --test-threads=1 --show-output > $R/gpu_gemm.log 2>&1; el "gpu_gemm rc=$?"
grep -h "^test \|test result" $R/gpu_gemm.log | grep -v " ok$"; grep -h "test result" $R/gpu_gemm.log
pack
# 2. the GEMM bench, 16-bit and TF32 tiers, every layout and shape, against cuBLAS
CUBINS_GEMM_TIERS=bf16,fp16,tf32 timeout $(t 175) bash $B/run.sh $R/bench bench gemm > $R/bench.log 2>&1; el "bench rc=$?"
grep -h "speed ratio" $R/bench.log | grep -v "x1x\|x8x\|x16x\|x64x\|x128x" | sed 's/: p50.*speed ratio/:/' | cut -c1-90
pack
# 3. the random sweep, first slice
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=0..20 timeout $(t 190) bash $B/run.sh $R/random bench gemm --quick > $R/random.log 2>&1; el "random rc=$?"
grep -h "^SWEEP" $R/random.log | cut -c1-120
pack
# 4. memcheck on the split-K test and the unaligned (operand pass) test
for t in split_k_matches_float64_and_repeats_bit_for_bit unaligned_operands_are_copied_or_read_by_element_and_match; do
  timeout $(t 40) compute-sanitizer --tool memcheck --error-exitcode 86 $D/tests/gpu_gemm --include-ignored --exact $t > $R/memcheck-$t.log 2>&1; el "memcheck $t rc=$?"
  grep -h "ERROR SUMMARY\|test result" $R/memcheck-$t.log
done
pack; ls -la $OUT
