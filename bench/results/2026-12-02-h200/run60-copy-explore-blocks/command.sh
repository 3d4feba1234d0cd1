# Built here: make -C bench/results/2026-12-02-h200/run60-copy-explore-blocks/src
# Run on the H200 (from the repository root):
cd bench/results/2026-12-02-h200/run60-copy-explore-blocks/src && ./explore 21 2>&1 | tee $OUT/explore.log
