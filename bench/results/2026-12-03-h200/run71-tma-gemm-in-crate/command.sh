# run71 on the H200: the warp-specialized TMA GEMM in the crate (commit 44956d6). Bundle built
# here in a clean clone: CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run71a
# There, with .devcarry carried: bash .devcarry/run71.sh
set -u
R=/tmp/r71; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r71.tar.gz r71); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
t() { local l=$(( 285 - ($(date +%s) - T0) )); [ $l -lt 5 ] && l=5; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
B=.devcarry/run71a; cp $B/BUILD.txt $R/bundle-BUILD.txt; D=/tmp/b71; mkdir -p $D
xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "binaries verified"
# 1. the bit-identity test first (a hang or fault shows here), then every GEMM test
timeout $(t 60) $D/tests/gpu_gemm --include-ignored --exact tma_and_wgmma_kernels_give_the_same_bits --nocapture > $R/gpu_gemm-bits.log 2>&1; el "bits rc=$?"
grep -h "BITS\|test result\|panicked" $R/gpu_gemm-bits.log | cut -c1-300
pack
timeout $(t 130) $D/tests/gpu_gemm --include-ignored --test-threads=1 > $R/gpu_gemm.log 2>&1; el "gpu_gemm rc=$?"
grep -h "^test \|test result" $R/gpu_gemm.log
pack
# 2. the quick GEMM bench (bf16 NN 4096^3, 8192^3, decode) against cuBLAS
CUBINS_RESULTS_DIR=$R/bench timeout $(t 100) bash $B/run.sh $R/bench bench gemm --quick > $R/bench.log 2>&1; el "bench rc=$?"
grep -h "speed ratio\|GEMM-STAMP" $R/bench.log | cut -c1-260 | head -20
pack
# 3. memcheck on the bit-identity test
timeout $(t 60) compute-sanitizer --tool memcheck --error-exitcode 86 $D/tests/gpu_gemm --include-ignored --exact tma_and_wgmma_kernels_give_the_same_bits > $R/memcheck-bits.log 2>&1; el "memcheck rc=$?"
grep -h "ERROR SUMMARY\|test result" $R/memcheck-bits.log
pack; ls -la $OUT
