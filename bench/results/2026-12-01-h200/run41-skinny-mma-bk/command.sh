#!/usr/bin/env bash
# Build here: make -C bench/results/2026-12-01-h200/run41-skinny-mma-bk/src (the program is ignored
# by git: name src/explore in the device call's carry)
# On the GPU machine, from the repository root: run16's runner with this folder's binary at
# M = 32, 64, 128 (MS), graph replay (logs/graph) and stream launches (EAGER=1, logs/eager).
set -u
R=/tmp/r41; mkdir -p $R
E=bench/results/2026-12-01-h200/run41-skinny-mma-bk/src/explore
RUN=bench/results/2026-11-30-h200/run16-decode-explore/src/run.sh
MS=32,64,128 EXPLORE=$E bash $RUN $R/graph > /dev/null 2>&1
MS=32,64,128 EXPLORE=$E EAGER=1 bash $RUN $R/eager > /dev/null 2>&1
tar czf $OUT/r41.tgz -C /tmp r41
for m in graph eager; do echo "== $m"; grep -E "rc=|DONE|WRONG|NONDET" $R/$m/summary.txt; done
echo "== graph summary"; cat $R/graph/summary.txt
