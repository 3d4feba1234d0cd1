#!/usr/bin/env bash
# TF32 operand pass v2 and the decode variants: every GEMM GPU gate (the digest gate holds
# the run23 keys; the recorder prints the new decode keys), then the whole GEMM bench.
set -u
R=/tmp/r24; mkdir -p $R/san; X=/tmp/b24x; mkdir -p $X
cp .devcarry/b24/BUILD.txt $R/bundle-BUILD.txt
xz -dc .devcarry/b24/payload.tar.xz | tar -xf - -C $X
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 150 $X/tests/gpu_gemm --include-ignored --test-threads=1 --nocapture > $R/gpu_gemm.log 2>&1; echo "gpu_gemm rc=$?" >> $R/rc.txt
grep -h "test result" $R/gpu_gemm.log >> $R/rc.txt
timeout 420 bash .devcarry/b24/run.sh $R/gemm bench gemm > $R/gemm.out 2>&1; echo "gemm rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r24.tgz -C /tmp r24
cat $R/rc.txt; grep -hE "^test .*FAILED|panicked" $R/gpu_gemm.log | head; grep -hE "^CHECK|speed ratio" $R/gemm.out | head -120
