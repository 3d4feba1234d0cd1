#!/usr/bin/env bash
# All GPU tests on the new build (RMSNorm backward prefetch, GEMM tiles), then the fused benches
# against torch eager in the same call.
set -u
R=/tmp/r9; mkdir -p $R
echo "pwd=$(pwd)" > $R/where.txt
cp .devcarry/b6/BUILD.txt $R/bundle-BUILD.txt 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 170 bash .devcarry/b6/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
timeout 90 python3 benches/torch_fused.py $R/torch_fused.json > $R/torch.out 2>&1; echo "torch rc=$?" >> $R/rc.txt
CUBINS_TORCH_FUSED_JSON=$R/torch_fused.json timeout 220 bash .devcarry/b6/run.sh $R/fused bench fused > $R/fused.out 2>&1; echo "fused rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r9.tgz -C /tmp r9
cat $R/rc.txt; grep -hE "^FAIL|^      " $R/tests.out | head; grep -h "passed," $R/tests.out; grep -hE "^CHECK" $R/fused.out | head -40
