# run72 on the H200 (bundle of commit 1e548bd: split K; the TMA tile with its plain-call
# epilogue). Bundle built here in a clean clone:
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run72b
# There, with .devcarry/run72.sh and .devcarry/run72b carried: bash .devcarry/run72.sh
set -u
R=/tmp/r72; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r72.tar.gz r72); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
t() { local l=$(( 540 - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
B=.devcarry/run72b; cp $B/BUILD.txt $R/bundle-BUILD.txt; D=/tmp/b72; mkdir -p $D
xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "binaries verified"
for t in split_k_matches_float64_and_repeats_bit_for_bit tma_and_wgmma_kernels_give_the_same_bits; do
  timeout $(t 60) $D/tests/gpu_gemm --include-ignored --exact $t --nocapture > $R/gpu_gemm-$t.log 2>&1; el "$t rc=$?"
  grep -h "test result\|panicked" -A2 $R/gpu_gemm-$t.log | cut -c1-400 | head -8
done
grep -h "^SPLIT" $R/gpu_gemm-split*.log | head -3 | cut -c1-400
pack
CUBINS_GEMM_SWEEP=tma CUBINS_GEMM_LAYOUTS=nn,tn,nt timeout $(t 170) bash $B/run.sh $R/bench bench gemm --quick > $R/bench.log 2>&1; el "bench rc=$?"
grep -h "speed ratio" $R/bench.log | cut -c1-200
pack
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=0..16 timeout $(t 170) bash $B/run.sh $R/random bench gemm --quick > $R/random.log 2>&1; el "random rc=$?"
grep -h "SWEEP\|split=" $R/random.log | cut -c1-260
pack
timeout $(t 400) $D/tests/gpu_gemm --include-ignored --test-threads=1 --skip split_k_matches --skip tma_and_wgmma > $R/gpu_gemm-all.log 2>&1; el "gpu_gemm rc=$?"
grep -h "test result\|FAILED\|panicked" $R/gpu_gemm-all.log | cut -c1-300 | head
pack; ls -la $OUT
