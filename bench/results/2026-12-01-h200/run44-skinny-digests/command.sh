#!/usr/bin/env bash
# run43 again with the two digest lines run42's log printed after the test name (bundles b44a:
# CUBINS_ARCHS="90;90a", b44s: "90"; cargo xtask gpu-bundle --out .devcarry/b44a / b44s): every
# GPU test binary from b44a, the digest gate from b44s.
set -u
R=/tmp/r44; mkdir -p $R; mkdir -p /tmp/b44sx
cp .devcarry/b44a/BUILD.txt $R/bundle-BUILD.txt; cp .devcarry/b44s/BUILD.txt $R/bundle-sm90-BUILD.txt
xz -dc .devcarry/b44s/payload.tar.xz | tar -xf - -C /tmp/b44sx
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 220 bash .devcarry/b44a/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
grep -h "passed," $R/tests.out >> $R/rc.txt
timeout 60 /tmp/b44sx/tests/gpu_gemm --include-ignored --test-threads=1 --exact digests_match_the_record > $R/sm90-digests.log 2>&1; echo "sm90 digests rc=$?" >> $R/rc.txt
grep -h "test result" $R/sm90-digests.log >> $R/rc.txt
tar czf $OUT/r44.tgz -C /tmp r44
cat $R/rc.txt; grep -hE "^FAIL" $R/tests.out | head
