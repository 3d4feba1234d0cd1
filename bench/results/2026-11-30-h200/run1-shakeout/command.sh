#!/usr/bin/env bash
# Shakeout run: GPU tests, harness self-test, ceilings, fused benches with torch comparator.
set -u
B=.devcarry/b1/run.sh; R=/tmp/r; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 200 bash $B $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
timeout 70 python3 benches/torch_fused.py $R/torch_fused.json --quick > $R/torch.out 2>&1; echo "torch rc=$?" >> $R/rc.txt
for b in harness_selftest copy_ceiling cublas_sanity; do timeout 60 bash $B $R/b_$b bench $b --quick > $R/$b.out 2>&1; echo "$b rc=$?" >> $R/rc.txt; done
CUBINS_TORCH_FUSED_JSON=$R/torch_fused.json timeout 110 bash $B $R/b_fused bench fused --quick > $R/fused.out 2>&1; echo "fused rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r.tgz -C /tmp r
cat $R/rc.txt; grep -hE "^(PASS|FAIL|[0-9]+ passed)" $R/tests.out | grep -v "^PASS" | head -40; grep -h "passed," $R/*.out
