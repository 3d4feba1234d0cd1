#!/bin/bash
# wgmma explorer: tails correctness, then bf16/fp16 large shapes vs cuBLAS.
set -x
R=/tmp/r14; mkdir -p $R
cd bench/results/2026-11-30-h200/run14-wgmma-explore/src
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv > $R/smi.txt 2>&1
./explore tails > $R/tails.txt 2>&1; echo "tails rc=$?" >> $R/tails.txt
grep -c WRONG $R/tails.txt
./explore bf16 > $R/bf16.txt 2>&1; echo "rc=$?" >> $R/bf16.txt
./explore fp16 > $R/fp16.txt 2>&1; echo "rc=$?" >> $R/fp16.txt
cd /tmp && tar czf $OUT/r14.tgz r14
grep -hE "RESULT|rc=" $R/*.txt | sed -E "s/ +/ /g" | cut -c1-170
