#!/usr/bin/env bash
# Build here: make -C bench/results/2026-12-01-h200/run52-decode-nn-m8-stagger/src (the program is
# ignored by git: name src/explore in the device call's carry)
# On the GPU machine, from the repository root: run16's runner with this folder's binary at
# M = 1, 2, 4, 8 (MS), graph replay twice (logs/graph,
# logs/graph2: the spread between two identical runs), then the archive.
set -u
R=/tmp/r52; mkdir -p $R
E=bench/results/2026-12-01-h200/run52-decode-nn-m8-stagger/src/explore
RUN=bench/results/2026-11-30-h200/run16-decode-explore/src/run.sh
MS=1,2,4,8 EXPLORE=$E bash $RUN $R/graph > /dev/null 2>&1
tar czf $OUT/r52.tgz -C /tmp r52
echo "== graph"; grep -E "x4096x4096|rc=|DONE|WRONG|NONDET" $R/graph/summary.txt
MS=1,2,4,8 EXPLORE=$E bash $RUN $R/graph2 > /dev/null 2>&1
tar czf $OUT/r52.tgz -C /tmp r52
echo "== graph2"; grep -E "x4096x4096|rc=|DONE|WRONG|NONDET" $R/graph2/summary.txt
