#!/usr/bin/env bash
# The whole GEMM bench (every tier: bf16, fp16, TF32, pedantic f32) from a bundle of the
# committed tree with run49's large-N decode kernels (CUBINS_ARCHS="90;90a" cargo xtask
# gpu-bundle --out .devcarry/b54a): paired alternating windows against cuBLAS in one process.
set -u
R=/tmp/r54; mkdir -p $R
cp .devcarry/b54a/BUILD.txt $R/bundle-BUILD.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 540 bash .devcarry/b54a/run.sh $R/gemm bench gemm > $R/gemm.out 2>&1; echo "gemm rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r54.tgz -C /tmp r54
cat $R/rc.txt; grep -hE "^CHECK FAIL" $R/gemm.out
grep -h "speed ratio" $R/gemm.out | sed -E 's/^ *([a-z0-9]+ [a-z]+ [0-9x]+):.*p50 ([0-9.]+) us.*comparator p50 ([0-9.]+) us; speed ratio ([0-9.]+x).*/\1 \4/' | awk '{k=$1" "$2; if (k!=last) {if (line) print line; line=k; last=k} line=line"  "$3"="$4} END {print line}'
