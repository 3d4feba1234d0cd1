#!/usr/bin/env bash
# Every GPU test binary after the last planner change (TF32 on wgmma needs no workspace
# where it writes none: K = 0 or an empty C), sm_90 + sm_90a bundle.
set -u
R=/tmp/r27; mkdir -p $R
cp .devcarry/b27/BUILD.txt $R/bundle-BUILD.txt
timeout 240 bash .devcarry/b27/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
grep -h "passed," $R/tests.out >> $R/rc.txt
tar czf $OUT/r27.tgz -C /tmp r27
cat $R/rc.txt; grep -hE "^FAIL" $R/tests.out | head
