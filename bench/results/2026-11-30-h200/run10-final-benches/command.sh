#!/usr/bin/env bash
# Fused benches (RMSNorm backward: prefetch only where a block holds its SM alone) and the
# full GEMM bench against cuBLAS (new 128x256 tiles), one build.
set -u
R=/tmp/r11; mkdir -p $R
cp .devcarry/b8/BUILD.txt $R/bundle-BUILD.txt 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 200 bash .devcarry/b8/run.sh $R/fused bench fused > $R/fused.out 2>&1; echo "fused rc=$?" >> $R/rc.txt
timeout 300 bash .devcarry/b8/run.sh $R/gemm bench gemm > $R/gemm.out 2>&1; echo "gemm rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r11.tgz -C /tmp r11
cat $R/rc.txt; grep -hE "^CHECK" $R/fused.out | grep -E "FAIL|rmsnorm_bwd" | head; grep -hE "^CHECK" $R/gemm.out | head -30
