#!/usr/bin/env bash
# After gating programmatic launches on the driver version (bundle b38a, sm_90 + sm_90a):
# every GPU test binary, and the decode route test with its STAMP lines.
set -u
R=/tmp/r38; mkdir -p $R; X=/tmp/b38x; mkdir -p $X
cp .devcarry/b38a/BUILD.txt $R/bundle-BUILD.txt
xz -dc .devcarry/b38a/payload.tar.xz | tar -xf - -C $X
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > $R/smi.txt 2>&1
timeout 240 bash .devcarry/b38a/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
grep -h "passed," $R/tests.out >> $R/rc.txt
timeout 60 $X/tests/gpu_gemm --include-ignored --test-threads=1 --nocapture --exact decode_shapes_take_the_decode_kernel > $R/decode-route.log 2>&1; echo "decode route rc=$?" >> $R/rc.txt
tar czf $OUT/r38.tgz -C /tmp r38
cat $R/rc.txt; grep -hE "^FAIL" $R/tests.out | head; grep -c "launch=programmatic-dependent" $R/decode-route.log
