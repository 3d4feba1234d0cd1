#!/usr/bin/env bash
# Build here: make -C bench/results/2026-12-01-h200/run45-decode-nn-stream/src (the program is
# ignored by git: name src/explore in the device call's carry)
# On the GPU machine, from the repository root: run16's runner with this folder's binary,
# at M = 1 only (MS), graph replay (logs/graph) and stream launches (EAGER=1, logs/eager),
# then the archive.
set -u
R=/tmp/r45; mkdir -p $R
E=bench/results/2026-12-01-h200/run45-decode-nn-stream/src/explore
RUN=bench/results/2026-11-30-h200/run16-decode-explore/src/run.sh
MS=1 EXPLORE=$E bash $RUN $R/graph > /dev/null 2>&1
MS=1 EXPLORE=$E EAGER=1 bash $RUN $R/eager > /dev/null 2>&1
tar czf $OUT/r45.tgz -C /tmp r45
for m in graph eager; do echo "== $m"; grep -E "x4096x4096|x8192x8192|rc=|DONE|WRONG|NONDET" $R/$m/summary.txt; done
