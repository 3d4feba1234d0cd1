# run74 on the H200 (bundle of commit 2954b0c: the operand pass only where it pays).
# Bundle built here in a clean clone:
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run74a
# There, with .devcarry/run74.sh and .devcarry/run74a carried: bash .devcarry/run74.sh
set -u
R=/tmp/r74; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r74.tar.gz r74); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
t() { local l=$(( 420 - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
B=.devcarry/run74a; cp $B/BUILD.txt $R/bundle-BUILD.txt; D=/tmp/b74; mkdir -p $D
xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "binaries verified"
# 1. every GEMM GPU test
timeout $(t 130) $D/tests/gpu_gemm --include-ignored --test-threads=1 --show-output > $R/gpu_gemm.log 2>&1; el "gpu_gemm rc=$?"
grep -h "^test \|test result" $R/gpu_gemm.log | grep -v " ok$"; grep -h "test result" $R/gpu_gemm.log
pack
# 2. the random sweep's first shapes again (the tiny ones the copy slowed) and on
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=0..12 timeout $(t 290) bash $B/run.sh $R/random bench gemm --quick > $R/random.log 2>&1; el "random rc=$?"
grep -h "^SWEEP" $R/random.log | cut -c1-120
pack; ls -la $OUT
