#!/usr/bin/env bash
# Skinny tiles (run41) in the crate: every GEMM gate from the sm_90-only and the sm_90 + sm_90a
# bundles (the digest gate has no keys yet for the shapes the skinny tiles now take: the
# recorder prints them), then the GEMM bench for the 16-bit tiers from the sm_90a bundle.
# Bundles: CUBINS_ARCHS="90" / "90;90a" cargo xtask gpu-bundle --out .devcarry/b42s / b42a.
set -u
R=/tmp/r42; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
for b in b42s b42a; do
  X=/tmp/${b}x; mkdir -p $X
  cp .devcarry/$b/BUILD.txt $R/$b-BUILD.txt
  xz -dc .devcarry/$b/payload.tar.xz | tar -xf - -C $X
  timeout 150 $X/tests/gpu_gemm --include-ignored --test-threads=1 --nocapture > $R/$b-gpu_gemm.log 2>&1; echo "$b gpu_gemm rc=$?" >> $R/rc.txt
  grep -h "test result" $R/$b-gpu_gemm.log >> $R/rc.txt
done
CUBINS_GEMM_TIERS=bf16,fp16 timeout 330 bash .devcarry/b42a/run.sh $R/gemm bench gemm > $R/gemm.out 2>&1; echo "gemm rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r42.tgz -C /tmp r42
cat $R/rc.txt; grep -hE "^test .*FAILED|panicked" $R/*gpu_gemm.log | head; grep -hE "PASS|FAIL" $R/gemm.out | head -40
grep -h "speed ratio" $R/gemm.out | grep -E " (32|64|128)x(4096|8192)x" | head -40
