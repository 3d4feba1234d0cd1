# run99: the sweep's four shapes below 0.80x on every schedule that fits them (selector
# calibration), on the landing state (bundle b97). There, with .devcarry carried:
# bash .devcarry/run99.sh
set -u
R=/tmp/r99; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r99.tar.gz r99); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/b97; cp $B/BUILD.txt $R/bundle-b97-BUILD.txt
CUBINS_GEMM_SWEEP=1 CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=15,31,10,40 timeout 120 bash $B/run.sh $R/cliffs bench gemm --quick > $R/cliffs.log 2>&1; el "cliffs rc=$?"
grep -h "speed ratio" $R/cliffs.log | sed 's/: p50 \([0-9.]*\) us.*speed ratio \([0-9.]*\)x.*/ \1 us \2/' | cut -c1-120
pack; ls -la $OUT
