#!/usr/bin/env bash
# Final gates: (1) the sm_90 + sm_90a bundle: every GPU test binary (the GEMM digest gate
# holds the run24 decode record, in a later process than the recording), memcheck and
# racecheck on the bf16 parity gate (every decode variant and the wgmma tile) and the TF32
# gates (the operand pass); (2) the sm_90-only bundle: every GEMM gate on the sm_90 route
# and the recorder (decode keys for @sm_90).
set -u
R=/tmp/r25; mkdir -p $R/san; X=/tmp/b25x; mkdir -p $X
cp .devcarry/b25/BUILD.txt $R/bundle-BUILD.txt; cp .devcarry/b25s/BUILD.txt $R/bundle-sm90-BUILD.txt
xz -dc .devcarry/b25/payload.tar.xz | tar -xf - -C $X
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 220 bash .devcarry/b25/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
grep -h "passed," $R/tests.out >> $R/rc.txt
run_san() { # tool binary timeout filter...
  local tool=$1 bin=$2 t=$3; shift 3
  CUBINS_SANITIZER=$tool timeout $t compute-sanitizer --tool $tool --error-exitcode 86 --print-limit 100 \
    $X/tests/$bin --include-ignored --test-threads=1 "$@" > $R/san/$tool-$bin-${@: -1}.log 2>&1
  echo "$tool $bin $* rc=$?" >> $R/rc.txt
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/san/$tool-$bin-${@: -1}.log >> $R/rc.txt
}
run_san memcheck gpu_gemm 70 --exact parity_bf16_every_entry_point
run_san racecheck gpu_gemm 130 --exact parity_bf16_every_entry_point
run_san memcheck gpu_gemm 40 tf32_
run_san racecheck gpu_gemm 40 tf32_
S=/tmp/b25sx; mkdir -p $S
xz -dc .devcarry/b25s/payload.tar.xz | tar -xf - -C $S
timeout 90 $S/tests/gpu_gemm --include-ignored --test-threads=1 --nocapture > $R/sm90-gpu_gemm.log 2>&1; echo "sm90 gpu_gemm rc=$?" >> $R/rc.txt
grep -h "test result" $R/sm90-gpu_gemm.log >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r25.tgz -C /tmp r25
cat $R/rc.txt; grep -hE "^FAIL" $R/tests.out | head; grep -hE "^test .*FAILED|panicked" $R/sm90-gpu_gemm.log | head
