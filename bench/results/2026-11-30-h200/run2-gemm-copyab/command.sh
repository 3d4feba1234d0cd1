#!/usr/bin/env bash
# GPU tests on the current build, copy kernel A/B against the previous build, GEMM vs cuBLAS.
set -u
R=/tmp/r2; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 170 bash .devcarry/b2/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
mkdir -p /tmp/b1x && xz -dc .devcarry/b1/payload.tar.xz | tar -xf - -C /tmp/b1x
timeout 30 /tmp/b1x/benches/copy_ceiling --dump-artifacts $R/base-artifacts > $R/dump.out 2>&1; echo "dump rc=$?" >> $R/rc.txt
timeout 70 bash .devcarry/b2/run.sh $R/copyab bench copy_ceiling --baseline-artifacts $R/base-artifacts > $R/copyab.out 2>&1; echo "copyab rc=$?" >> $R/rc.txt
CUBINS_GEMM_SWEEP=1 timeout 230 bash .devcarry/b2/run.sh $R/gemm bench gemm --quick > $R/gemm.out 2>&1; echo "gemm rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r2.tgz -C /tmp r2
cat $R/rc.txt; grep -hE "^FAIL|^      " $R/tests.out | head -30; grep -h "passed," $R/*.out; grep -hE "^CHECK" $R/gemm.out $R/copyab.out | head -40
