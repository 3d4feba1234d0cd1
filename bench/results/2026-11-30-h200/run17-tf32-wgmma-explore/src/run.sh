#!/bin/bash
# TF32 wgmma explorer on the GPU machine. From the repo root: bash .devcarry/tf32/run.sh LOGDIR
# Logs: smi.txt, tails.txt (tail shapes, every variant), unaligned.txt (odd leading
# dimensions), prec.txt (rounding probe + error vs an f64 reference), tf32.txt (large shapes
# vs cuBLAS TF32, the leading variants), summary.txt. About 2.5 minutes.
set -u
R=${1:-/tmp/tf32}; mkdir -p "$R"; R=$(cd "$R" && pwd)
cd "$(dirname "$0")"  # the folder holding the built explore
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $R/smi.txt 2>&1
timeout 60 ./explore tails > $R/tails.txt 2>&1; echo "tails rc=$?" >> $R/tails.txt
timeout 30 ./explore unaligned > $R/unaligned.txt 2>&1; echo "unaligned rc=$?" >> $R/unaligned.txt
timeout 40 ./explore prec > $R/prec.txt 2>&1; echo "prec rc=$?" >> $R/prec.txt
# Large shapes: truncating SS/RS kernels, the rounding ones, the existing mma.sync tier.
BEST="nt_t ,nt_r ,st_nt_r,st_nn_r,st_tn_,mma_,nn_rs_,rb3_tn_t,rb_tn_r"
timeout 150 ./explore tf32 "$BEST" > $R/tf32.txt 2>&1; echo "tf32 rc=$?" >> $R/tf32.txt
echo "WRONG lines: $(cat $R/tails.txt $R/unaligned.txt $R/tf32.txt | grep -c WRONG) of $(cat $R/tails.txt $R/unaligned.txt | grep -c RESULT) checks" > $R/summary.txt
grep -h "rc=" $R/*.txt >> $R/summary.txt
grep -hE "^(PROBE|PREC)" $R/prec.txt | sed -E 's/ +/ /g' >> $R/summary.txt
grep -hE "^RESULT" $R/tf32.txt | sed -E 's/ +/ /g; s/ p95_us=[^ ]*//; s/ GBps=[^ ]*//' >> $R/summary.txt
grep -hE "WRONG" $R/tails.txt $R/unaligned.txt | sed -E 's/ +/ /g' >> $R/summary.txt
cat $R/summary.txt
