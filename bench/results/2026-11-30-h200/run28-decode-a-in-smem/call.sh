#!/usr/bin/env bash
set -u
R=/tmp/r28; mkdir -p $R
bash bench/results/2026-11-30-h200/run28-decode-a-in-smem/command.sh $R/logs > $R/run.out 2>&1
tar czf $OUT/r28.tgz -C /tmp r28
cat $R/logs/summary.txt | head -80
