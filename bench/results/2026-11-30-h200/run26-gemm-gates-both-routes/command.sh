#!/usr/bin/env bash
# The GEMM gates once more from both bundles after the last test and digest changes: the
# sm_90-only bundle holds the run25 @sm_90 decode record in a later process, and the
# sm_90 + sm_90a bundle runs every GEMM gate again.
set -u
R=/tmp/r26; mkdir -p $R
for b in b26s b26; do
  X=/tmp/${b}x; mkdir -p $X
  cp .devcarry/$b/BUILD.txt $R/$b-BUILD.txt
  xz -dc .devcarry/$b/payload.tar.xz | tar -xf - -C $X
  timeout 120 $X/tests/gpu_gemm --include-ignored --test-threads=1 > $R/$b-gpu_gemm.log 2>&1; echo "$b gpu_gemm rc=$?" >> $R/rc.txt
  grep -h "test result" $R/$b-gpu_gemm.log >> $R/rc.txt
done
tar czf $OUT/r26.tgz -C /tmp r26
cat $R/rc.txt; grep -hE "panicked" -A3 $R/*.log | head -20
