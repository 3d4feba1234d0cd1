#!/usr/bin/env bash
# GEMM tile/decode exploration vs cuBLAS; ncu stall reasons of the current large tile.
set -u
R=/tmp/r7; mkdir -p $R
X=.devcarry/explore/explore
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 200 $X large > $R/large.out 2>&1; echo "large rc=$?" >> $R/rc.txt
timeout 100 $X decode > $R/decode.out 2>&1; echo "decode rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
true
tar czf $OUT/r7.tgz -C /tmp r7
cat $R/rc.txt; grep -h RESULT $R/large.out $R/decode.out | awk "{print \$2,\$3,\$4,\$5,\$(NF-1),\$NF}" | sed "s/ratio_vs_cublas=//"
