#!/usr/bin/env bash
# sm_90 + sm_90a bundle (wgmma tier): every GPU test (the recorders print the sm_90a digest
# lines), then the GEMM bench against cuBLAS.
set -u
R=/tmp/r15; mkdir -p $R
cp .devcarry/b15/BUILD.txt $R/bundle-BUILD.txt 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 200 bash .devcarry/b15/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
timeout 330 bash .devcarry/b15/run.sh $R/gemm bench gemm > $R/gemm.out 2>&1; echo "gemm rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r15.tgz -C /tmp r15
cat $R/rc.txt; grep -hE "passed|FAIL" $R/tests.out | tail -15; grep -hE "^CHECK" $R/gemm.out | head -40
