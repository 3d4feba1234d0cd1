#!/usr/bin/env bash
# After the review refactor (typed wgmma route lookup, shared test cases): every GEMM GPU gate.
set -u
R=/tmp/r22; mkdir -p $R; X=/tmp/b22x; mkdir -p $X
cp .devcarry/b22/BUILD.txt $R/bundle-BUILD.txt
xz -dc .devcarry/b22/payload.tar.xz | tar -xf - -C $X
timeout 150 $X/tests/gpu_gemm --include-ignored --test-threads=1 > $R/gpu_gemm.log 2>&1; echo "gpu_gemm rc=$?" >> $R/rc.txt
grep -h "test result" $R/gpu_gemm.log >> $R/rc.txt
tar czf $OUT/r22.tgz -C /tmp r22
cat $R/rc.txt; grep -h "STAMP.*wgmma" $R/gpu_gemm.log | head -2
