#!/usr/bin/env bash
# Full fused benches vs torch eager; compute-sanitizer on the GEMM gates.
set -u
R=/tmp/r5; mkdir -p $R/san; X=/tmp/b4x; mkdir -p $X
[ -x $X/tests/gpu_gemm ] || xz -dc .devcarry/b4/payload.tar.xz | tar -xf - -C $X
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 90 python3 benches/torch_fused.py $R/torch_fused.json > $R/torch.out 2>&1; echo "torch rc=$?" >> $R/rc.txt
CUBINS_TORCH_FUSED_JSON=$R/torch_fused.json timeout 160 bash .devcarry/b4/run.sh $R/fused bench fused > $R/fused.out 2>&1; echo "fused rc=$?" >> $R/rc.txt
for tool in memcheck racecheck; do
  CUBINS_SANITIZER=$tool timeout 110 compute-sanitizer --tool $tool --error-exitcode 86 --print-limit 100 \
    $X/tests/gpu_gemm --include-ignored --test-threads=1 --skip record_ --skip digests_ --skip repeat_ > $R/san/$tool-gpu_gemm.log 2>&1
  echo "$tool gpu_gemm rc=$?" >> $R/rc.txt
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/san/$tool-gpu_gemm.log >> $R/rc.txt
done
tar czf $OUT/r5.tgz -C /tmp r5
cat $R/rc.txt; grep -hE "^CHECK FAIL" $R/fused.out | head
