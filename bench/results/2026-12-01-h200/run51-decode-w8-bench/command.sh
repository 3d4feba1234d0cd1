#!/usr/bin/env bash
# The GEMM bench for the 16-bit tiers with run49's large-N decode kernels in the crate, from
# run50's sm_90 + sm_90a bundle (CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out
# .devcarry/b50a): paired alternating windows against cublasGemmEx in one process.
set -u
R=/tmp/r51; mkdir -p $R
cp .devcarry/b50a/BUILD.txt $R/bundle-BUILD.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
CUBINS_GEMM_TIERS=bf16,fp16 timeout 400 bash .devcarry/b50a/run.sh $R/gemm bench gemm > $R/gemm.out 2>&1; echo "gemm rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r51.tgz -C /tmp r51
cat $R/rc.txt; grep -hE "^CHECK FAIL" $R/gemm.out
grep -h "speed ratio" $R/gemm.out | sed -E 's/^ *([a-z0-9]+ [a-z]+ [0-9x]+):.*p50 ([0-9.]+) us.*comparator p50 ([0-9.]+) us; speed ratio ([0-9.]+x).*/\1 \4 (\2 vs \3 us)/'
