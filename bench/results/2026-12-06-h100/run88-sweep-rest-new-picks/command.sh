# run88: the random sweep's shapes 35-47 (the bench now rotates at most 4096 buffer sets:
# run87's attempt spent its 380 s allocating two million sets for 1 x 2 x 7), and #10, #23,
# #31 on the selector's new picks (no TMA tile below a full ring of K; skinny 64 x 64 from 70%
# of a wave where B is [K][N]). Bundle: CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out
# .devcarry/b88. There, with .devcarry carried: bash .devcarry/run88.sh
set -u
R=/tmp/r88; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r88.tar.gz r88); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-420}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
A=.devcarry/b88; cp $A/BUILD.txt $R/bundle-BUILD.txt
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=10,23,31 timeout $(t 60) bash $A/run.sh $R/cliffs bench gemm --quick > $R/cliffs.log 2>&1; el "cliffs rc=$?"
grep -h "^SWEEP" $R/cliffs.log | cut -c1-150
pack
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=35..48 timeout $(t 400) bash $A/run.sh $R/random bench gemm --quick > $R/random.log 2>&1; el "random rc=$?"
grep -h "^SWEEP" $R/random.log | cut -c1-150
pack; ls -la $OUT
