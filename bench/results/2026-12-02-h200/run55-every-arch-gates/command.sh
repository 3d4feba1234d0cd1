#!/usr/bin/env bash
# Every arch building its own schedules (GEMM rings per shared-memory class, Blackwell register
# budgets, sm_90a only for gemm_wgmma.cu): the GPU suite from both H200 routes. Bundles at the
# commit in bundle-BUILD.txt: b55a (CUBINS_ARCHS="90;90a": wgmma kernels from the sm_90a cubin,
# every other file from sm_90) and b55s ("90": the mma.sync route); `cargo xtask gpu-bundle
# --out .devcarry/b55a` (and b55s). MODE a: every GPU test from b55a, memcheck on the 16-bit
# GEMM parity gates (every entry point on its tail shapes); MODE s: every GPU test from b55s.
set -u
MODE=${1:?a or s}
R=/tmp/r55-$MODE; mkdir -p $R/san
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
if [ "$MODE" = a ]; then
  cp .devcarry/b55a/BUILD.txt $R/bundle-BUILD.txt
  timeout 300 bash .devcarry/b55a/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests (b55a) rc=$?" >> $R/rc.txt
  grep -h "passed," $R/tests.out >> $R/rc.txt
  X=/tmp/b55ax; mkdir -p $X; xz -dc .devcarry/b55a/payload.tar.xz | tar -xf - -C $X
  for t in parity_bf16_every_entry_point parity_fp16_every_entry_point; do
    CUBINS_SANITIZER=memcheck timeout 100 compute-sanitizer --tool memcheck --error-exitcode 86 --print-limit 100 \
      $X/tests/gpu_gemm --include-ignored --test-threads=1 --exact $t > $R/san/memcheck-gpu_gemm-$t.log 2>&1
    echo "memcheck gpu_gemm $t rc=$?" >> $R/rc.txt
    grep -h "ERROR SUMMARY\|test result" $R/san/memcheck-gpu_gemm-$t.log >> $R/rc.txt
  done
else
  cp .devcarry/b55s/BUILD.txt $R/bundle-BUILD.txt
  timeout 300 bash .devcarry/b55s/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests (b55s) rc=$?" >> $R/rc.txt
  grep -h "passed," $R/tests.out >> $R/rc.txt
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r55-$MODE.tgz -C /tmp r55-$MODE
cat $R/rc.txt; grep -hE "^FAIL" $R/tests.out | head -20
