#!/usr/bin/env bash
# The GPU suite from a bundle built in prebuilt mode: no nvcc at build time, the sm_90 and
# sm_90a kernels taken from a `cargo xtask export-prebuilt` folder and verified (SHA-256 of
# every artifact, source closures) before embedding. Here:
#   cargo xtask export-prebuilt --out PREBUILT
#   CUBINS_PREBUILT=PREBUILT CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b56p
# There: bash bench/results/2026-12-02-h200/run56-prebuilt-bundle/command.sh
set -u
R=/tmp/r56; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
cp .devcarry/b56p/BUILD.txt $R/bundle-BUILD.txt
timeout 300 bash .devcarry/b56p/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests (b56p) rc=$?" >> $R/rc.txt
grep -h "passed," $R/tests.out >> $R/rc.txt
grep -rh "STAMP" $R/tests | grep -o "origin=[a-z]*" | sort | uniq -c >> $R/rc.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r56.tgz -C /tmp r56
cat $R/rc.txt; grep -hE "^FAIL" $R/tests.out | head -20
