#!/usr/bin/env bash
# Decode stagger groups (run30): every GEMM gate from the sm_90-only and the sm_90 + sm_90a
# bundles (the digest gate has no keys yet for the changed decode kernels: the recorder prints
# them), then the GEMM bench for the 16-bit tiers (decode rows included) from the sm_90a bundle.
set -u
R=/tmp/r31; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
for b in b31s b31a; do
  X=/tmp/${b}x; mkdir -p $X
  cp .devcarry/$b/BUILD.txt $R/$b-BUILD.txt
  xz -dc .devcarry/$b/payload.tar.xz | tar -xf - -C $X
  timeout 150 $X/tests/gpu_gemm --include-ignored --test-threads=1 --nocapture > $R/$b-gpu_gemm.log 2>&1; echo "$b gpu_gemm rc=$?" >> $R/rc.txt
  grep -h "test result" $R/$b-gpu_gemm.log >> $R/rc.txt
done
CUBINS_GEMM_TIERS=bf16,fp16 timeout 330 bash .devcarry/b31a/run.sh $R/gemm bench gemm > $R/gemm.out 2>&1; echo "gemm rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r31.tgz -C /tmp r31
cat $R/rc.txt; grep -hE "^test .*FAILED|panicked" $R/*gpu_gemm.log | head; grep -hE "PASS|FAIL" $R/gemm.out | head -40
