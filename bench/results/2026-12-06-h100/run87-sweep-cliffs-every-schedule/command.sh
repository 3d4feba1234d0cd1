# run87: the random sweep's shapes 35-47 (never measured), then the cliffs #10, #23 and #31 on
# every schedule that fits them (CUBINS_GEMM_SWEEP=1). Bundle: .devcarry/b85 (run85's).
# There, with .devcarry carried: bash .devcarry/run87.sh
set -u
R=/tmp/r87; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r87.tar.gz r87); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-560}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
A=.devcarry/b85; cp $A/BUILD.txt $R/bundle-BUILD.txt
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=35..48 timeout $(t 380) bash $A/run.sh $R/random bench gemm --quick > $R/random.log 2>&1; el "random rc=$?"
grep -h "^SWEEP" $R/random.log | cut -c1-150
pack
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=23,10,31 CUBINS_GEMM_SWEEP=1 timeout $(t 400) bash $A/run.sh $R/sweep bench gemm --quick > $R/sweep.log 2>&1; el "sweep rc=$?"
grep -h "^SWEEP\|speed ratio" $R/sweep.log | cut -c1-200
pack; ls -la $OUT
