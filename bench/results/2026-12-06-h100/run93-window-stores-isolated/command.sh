# run93: which of run92's changes made #40 and #10 slower, and the fix. Bundles: b94 (window
# stores without divergence, window loads as global loads), b92 (run92's change), b93s (b92 without
# its window stores), b88 (main's kernels, e47ade0); one
# process each, sweep shapes 40, 10, 31, 15, two rounds.
set -u
R=/tmp/r93; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r93.tar.gz r93); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for round in 1 2; do
  for b in b94 b92 b93s b88; do
    B=.devcarry/$b; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
    CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=40,10,31,15 timeout 80 bash $B/run.sh $R/$b-$round bench gemm --quick > $R/$b-$round.log 2>&1; el "$b round $round rc=$?"
    grep -h "^SWEEP #" $R/$b-$round.log | cut -c1-150
  done
  pack
done
ls -la $OUT
