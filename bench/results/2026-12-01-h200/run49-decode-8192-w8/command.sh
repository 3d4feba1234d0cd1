#!/usr/bin/env bash
# Build here: make -C bench/results/2026-12-01-h200/run49-decode-8192-w8/src (the program is
# ignored by git: name src/explore in the device call's carry)
# On the GPU machine, from the repository root: run16's runner with this folder's binary at
# M = 1, 8, 16 (MS), graph replay (logs/graph) and stream launches (EAGER=1, logs/eager), then
# the archive (the eager ratios are only in the archive).
set -u
R=/tmp/r49; mkdir -p $R
E=bench/results/2026-12-01-h200/run49-decode-8192-w8/src/explore
RUN=bench/results/2026-11-30-h200/run16-decode-explore/src/run.sh
MS=1,8,16 EXPLORE=$E bash $RUN $R/graph > /dev/null 2>&1
tar czf $OUT/r49.tgz -C /tmp r49
echo "== graph"; grep -E "x4096x4096|x8192x8192|rc=|DONE|WRONG|NONDET" $R/graph/summary.txt
MS=1,8,16 EXPLORE=$E EAGER=1 bash $RUN $R/eager > /dev/null 2>&1
tar czf $OUT/r49.tgz -C /tmp r49
echo "== eager"; grep -E "rc=|DONE|WRONG|NONDET" $R/eager/summary.txt
