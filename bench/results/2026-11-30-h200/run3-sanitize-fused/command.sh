#!/usr/bin/env bash
# Sanitizers (memcheck, racecheck) on the runtime and fused gates; full fused bench vs torch; tests.
set -u
R=/tmp/r3; mkdir -p $R/san
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
X=/tmp/b3x; mkdir -p $X && xz -dc .devcarry/b3/payload.tar.xz | tar -xf - -C $X
for tool in memcheck racecheck; do
  for t in gpu_runtime gpu_fused; do
    CUBINS_SANITIZER=$tool timeout 150 compute-sanitizer --tool $tool --error-exitcode 86 --print-limit 100 \
      $X/tests/$t --include-ignored --test-threads=1 --skip record_ > $R/san/$tool-$t.log 2>&1
    echo "$tool $t rc=$?" | tee -a $R/rc.txt
    grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/san/$tool-$t.log | tee -a $R/rc.txt
  done
done
timeout 100 bash .devcarry/b3/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
timeout 100 python3 benches/torch_fused.py $R/torch_fused.json > $R/torch.out 2>&1; echo "torch rc=$?" >> $R/rc.txt
CUBINS_TORCH_FUSED_JSON=$R/torch_fused.json timeout 170 bash .devcarry/b3/run.sh $R/fused bench fused > $R/fused.out 2>&1; echo "fused rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r3.tgz -C /tmp r3
cat $R/rc.txt; grep -hE "^FAIL|^      " $R/tests.out | head; grep -h "passed," $R/*.out; grep -hE "^CHECK FAIL" $R/fused.out | head
