# Built here: make -C bench/results/2026-12-02-h200/run59-copy-explore/src
# Run on the H200 (from the repository root):
cd bench/results/2026-12-02-h200/run59-copy-explore/src && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/nvidia-smi.csv; ./explore 21 2>&1 | tee $OUT/explore.log
