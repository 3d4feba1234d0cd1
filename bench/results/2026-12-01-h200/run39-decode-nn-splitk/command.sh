#!/usr/bin/env bash
# Build here: make -C bench/results/2026-12-01-h200/run39-decode-nn-splitk/src (the program is
# ignored by git: name src/explore in the device call's carry)
# On the GPU machine, from the repository root: run16's runner with this folder's binary,
# graph replay (logs/graph) and stream launches (EAGER=1, logs/eager), then the archive.
set -u
R=/tmp/r39; mkdir -p $R
E=bench/results/2026-12-01-h200/run39-decode-nn-splitk/src/explore
RUN=bench/results/2026-11-30-h200/run16-decode-explore/src/run.sh
EXPLORE=$E bash $RUN $R/graph > /dev/null 2>&1
EXPLORE=$E EAGER=1 bash $RUN $R/eager > /dev/null 2>&1
tar czf $OUT/r39.tgz -C /tmp r39
for m in graph eager; do echo "== $m"; grep -E "4096x4096|rc=|DONE|WRONG|NONDET" $R/$m/summary.txt; grep -c SK_ANOMALY $R/$m/*.txt; done
