#!/usr/bin/env bash
set -u
R=/tmp/r29; mkdir -p $R
bash bench/results/2026-11-30-h200/run29-decode-wgmma/command.sh $R/logs > $R/run.out 2>&1
tar czf $OUT/r29.tgz -C /tmp r29
cat $R/logs/summary.txt | head -80
