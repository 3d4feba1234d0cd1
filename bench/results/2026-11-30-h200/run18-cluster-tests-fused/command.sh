#!/usr/bin/env bash
# sm_90 + sm_90a bundle with the RMSNorm backward cluster kernel: every GPU test (the digest
# gates check the sm_90a record of run15 in this second process), then the fused benches.
set -u
R=/tmp/r18; mkdir -p $R
cp .devcarry/b18/BUILD.txt $R/bundle-BUILD.txt 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 230 bash .devcarry/b18/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
timeout 230 bash .devcarry/b18/run.sh $R/fused bench fused > $R/fused.out 2>&1; echo "fused rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r18.tgz -C /tmp r18
cat $R/rc.txt; grep -hE "passed|^FAIL" $R/tests.out | tail -8; grep -hE "^CHECK" $R/fused.out | head -40
