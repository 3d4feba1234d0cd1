# run68 on the H200: the GPU suite from a 90;90a bundle (a), gpu_decoder from a 90 bundle (s)
# and a prebuilt-mode bundle (p); run69: the warp-specialized GEMM explorer; run70: the random
# GEMM sweep (bundle a). Bundles built here in a clean clone at commit b72d437:
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run68a
#   CUBINS_ARCHS="90"     cargo xtask gpu-bundle --out .devcarry/run68s
#   cargo xtask export-prebuilt --out PREBUILT
#   CUBINS_PREBUILT=PREBUILT CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run68p
# Explorer: make -C bench/results/2026-12-03-h200/run69-ws-gemm-explore/src
# There, with .devcarry carried: bash .devcarry/run68.sh
set -u
R=/tmp/r68; mkdir -p $R/a $R/s $R/p $R/explore $R/sweep
pack() { (cd /tmp && tar czf $OUT/r68.tar.gz r68); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
# t N: N seconds, or what is left of 560 s since the start when that is less (at least 5)
t() { local l=$(( 560 - ($(date +%s) - T0) )); [ $l -lt 5 ] && l=5; [ $1 -lt $l ] && l=$1; echo $l; }
# 1. every GPU test, bundle a
B=.devcarry/run68a; cp $B/BUILD.txt $R/a/bundle-BUILD.txt
CUBINS_RESULTS_DIR=$R/a timeout $(t 240) bash $B/run.sh $R/a/tests tests > $R/a/tests.log 2>&1; el "bundle a tests rc=$?"
tail -1 $R/a/tests/summary.txt; grep -h "^FAIL" $R/a/tests/summary.txt | head
grep -rh "STAMP" $R/a/tests 2>/dev/null | grep -o "origin=[a-z]*" | sort | uniq -c
pack
# 2. gpu_decoder (and gpu_runtime) from bundles s and p
for b in s p; do
  B=.devcarry/run68$b; cp $B/BUILD.txt $R/$b/bundle-BUILD.txt; D=/tmp/b68$b; mkdir -p $D
  xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b binaries verified"
  for t in gpu_decoder gpu_runtime; do
    timeout $(t 60) $D/tests/$t --include-ignored --test-threads=1 --nocapture > $R/$b/$t.log 2>&1; el "bundle $b $t rc=$?"
    grep -h "test result" $R/$b/$t.log
  done
  grep -h "STAMP" $R/$b/*.log | grep -o "origin=[a-z]*" | sort | uniq -c
done
pack
# 3. explorer: plain configs, then clusters, per layout
X=bench/results/2026-12-03-h200/run69-ws-gemm-explore/src/ws_gemm
for L in NT NN TN; do
  S="$L 4096 4096 4096 $L 8192 8192 8192 $L 4096 14336 4096 $L 4096 4096 14336 $L 1000 1000 1000 $L 320 4104 776"
  WS_CONFIGS=persist_g8,persist_g16,tile_per_cta_g8 timeout $(t 50) $X $S > $R/explore/$L-plain.log 2>&1; el "explore $L plain rc=$?"
  WS_CONFIGS=cluster2_persist_g8,cluster2_persist_g4 timeout $(t 35) $X $S > $R/explore/$L-cluster.log 2>&1; el "explore $L cluster rc=$?"
  grep -h "^ROW" $R/explore/$L-*.log | awk '{print $2,$3,$4,$5,$6,$14,$NF}'
  pack
done
# 4. the random sweep against cuBLAS
D=/tmp/b68a; mkdir -p $D; xz -dc .devcarry/run68a/payload.tar.xz | tar -xf - -C $D
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_RESULTS_DIR=$R/sweep timeout $(t 120) bash .devcarry/run68a/run.sh $R/sweep/out bench gemm --quick > $R/sweep/sweep.log 2>&1; el "sweep rc=$?"
tail -25 $R/sweep/sweep.log
pack
# 5. sanitizers on gpu_decoder, bundle a
for t in memcheck racecheck; do
  timeout $(t 70) compute-sanitizer --tool $t --error-exitcode 86 $D/tests/gpu_decoder --include-ignored --test-threads=1 > $R/a/sanitize-$t-gpu_decoder.log 2>&1; el "gpu_decoder $t rc=$?"
done
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/a/sanitize-*.log
pack; ls -la $OUT
