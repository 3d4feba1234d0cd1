#!/usr/bin/env bash
# Final: full fused benches vs torch eager (RMSNorm backward plan fix), then all GPU tests.
set -u
R=/tmp/r6; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 90 python3 benches/torch_fused.py $R/torch_fused.json > $R/torch.out 2>&1; echo "torch rc=$?" >> $R/rc.txt
CUBINS_TORCH_FUSED_JSON=$R/torch_fused.json timeout 170 bash .devcarry/b5/run.sh $R/fused bench fused > $R/fused.out 2>&1; echo "fused rc=$?" >> $R/rc.txt
timeout 130 bash .devcarry/b5/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
tar czf $OUT/r6.tgz -C /tmp r6
cat $R/rc.txt; grep -hE "^FAIL|^      " $R/tests.out | head; grep -h "passed," $R/tests.out; grep -hE "^CHECK FAIL|^WRONG|^RESULT" $R/fused.out | head
