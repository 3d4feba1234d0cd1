#!/usr/bin/env bash
# Decode kernels as programmatic dependents (the sm_90 + sm_90a bundle b34a): every GPU test
# binary, memcheck and racecheck on the bf16 parity gate (every decode variant), the decode
# route test with its STAMP lines, then the GEMM bench for the 16-bit tiers.
set -u
R=/tmp/r34; mkdir -p $R/san; X=/tmp/b34x; mkdir -p $X
cp .devcarry/b34a/BUILD.txt $R/bundle-BUILD.txt
xz -dc .devcarry/b34a/payload.tar.xz | tar -xf - -C $X
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 220 bash .devcarry/b34a/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
grep -h "passed," $R/tests.out >> $R/rc.txt
run_san() { # tool binary timeout filter...
  local tool=$1 bin=$2 t=$3; shift 3
  CUBINS_SANITIZER=$tool timeout $t compute-sanitizer --tool $tool --error-exitcode 86 --print-limit 100 \
    $X/tests/$bin --include-ignored --test-threads=1 "$@" > $R/san/$tool-$bin-${@: -1}.log 2>&1
  echo "$tool $bin $* rc=$?" >> $R/rc.txt
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/san/$tool-$bin-${@: -1}.log >> $R/rc.txt
}
run_san memcheck gpu_gemm 60 --exact parity_bf16_every_entry_point
run_san racecheck gpu_gemm 90 --exact parity_bf16_every_entry_point
timeout 60 $X/tests/gpu_gemm --include-ignored --test-threads=1 --nocapture --exact decode_shapes_take_the_decode_kernel > $R/decode-route.log 2>&1; echo "decode route rc=$?" >> $R/rc.txt
CUBINS_GEMM_TIERS=bf16,fp16 timeout 300 bash .devcarry/b34a/run.sh $R/gemm bench gemm > $R/gemm.out 2>&1; echo "gemm rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r34.tgz -C /tmp r34
cat $R/rc.txt; grep -hE "^FAIL" $R/tests.out | head; grep -hE "PASS|FAIL" $R/gemm.out | head -40
