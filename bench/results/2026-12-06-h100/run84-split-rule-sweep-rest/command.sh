# run84: the split-K rule against no split on the sweep's split shapes (paired in this call),
# then the rest of the random sweep (shapes 16..48).
# Bundle: CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run84a
# There, with .devcarry carried: bash .devcarry/run84.sh
set -u
R=/tmp/r84; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r84.tar.gz r84); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-455}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/run84a; cp $B/BUILD.txt $R/bundle-BUILD.txt
export CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026
# 1. the shapes the selector splits (0, 3, 5, 9, 13): no split, then the selector's
CUBINS_GEMM_SPLITS=1 CUBINS_GEMM_RANDOM_SHAPES=0,3,5,9,13 timeout $(t 75) bash $B/run.sh $R/nosplit bench gemm --quick > $R/nosplit.log 2>&1; el "no split rc=$?"
CUBINS_GEMM_RANDOM_SHAPES=0,3,5,9,13 timeout $(t 75) bash $B/run.sh $R/split bench gemm --quick > $R/split.log 2>&1; el "split rc=$?"
grep -h "^SWEEP #" $R/nosplit.log $R/split.log | cut -c1-120
grep -h "^  bf16" $R/nosplit.log $R/split.log | cut -c1-120
pack
# 2. the rest of the sweep
CUBINS_GEMM_RANDOM_SHAPES=16..48 timeout $(t 600) bash $B/run.sh $R/random bench gemm --quick > $R/random.log 2>&1; el "random rc=$?"
grep -h "^SWEEP" $R/random.log | cut -c1-150
grep -h "^GEMM-STAMP" $R/random.log | sed 's/.*kernel=\([^ ]*\).* m=\([0-9]*\) n=\([0-9]*\) k=\([0-9]*\).*flags=\([0-9a-fx]*\)\(.*\)/\1 \2x\3x\4 \5 \6/' | cut -c1-160
pack; ls -la $OUT
