#!/usr/bin/env bash
# Build here: make -C bench/results/2026-12-01-h200/run53-skinny-128/src (the program is ignored
# by git: name src/explore in the device call's carry)
# On the GPU machine, from the repository root: run16's runner with this folder's binary at
# M = 64, 128 (MS), graph replay (logs/graph) and stream launches (EAGER=1, logs/eager).
set -u
R=/tmp/r53; mkdir -p $R
E=bench/results/2026-12-01-h200/run53-skinny-128/src/explore
RUN=bench/results/2026-11-30-h200/run16-decode-explore/src/run.sh
MS=64,128 EXPLORE=$E bash $RUN $R/graph > /dev/null 2>&1
tar czf $OUT/r53.tgz -C /tmp r53
echo "== graph"; grep -E "x4096x4096|x8192x8192|rc=|DONE|WRONG|NONDET" $R/graph/summary.txt
MS=64,128 EXPLORE=$E EAGER=1 bash $RUN $R/eager > /dev/null 2>&1
tar czf $OUT/r53.tgz -C /tmp r53
echo "== eager"; grep -E "rc=|DONE|WRONG|NONDET" $R/eager/summary.txt
