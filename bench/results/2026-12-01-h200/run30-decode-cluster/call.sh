#!/usr/bin/env bash
set -u
R=/tmp/r30; mkdir -p $R
bash bench/results/2026-12-01-h200/run30-decode-cluster/command.sh $R/logs "${1:-}" > $R/run.out 2>&1
tar czf $OUT/r30.tgz -C /tmp r30
cat $R/logs/summary.txt | head -120
