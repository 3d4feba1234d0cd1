#!/usr/bin/env bash
# Gates after run31's digest record: (1) the sm_90 + sm_90a bundle: every GPU test binary
# (the GEMM digest gate holds run31's decode keys in this later process), memcheck and
# racecheck on the bf16 parity gate (every decode variant on its tail shapes); (2) the
# sm_90-only bundle: the GEMM digest gate on the sm_90 route (run31 ran its other gates).
set -u
R=/tmp/r32; mkdir -p $R/san; X=/tmp/b32x; mkdir -p $X
cp .devcarry/b32a/BUILD.txt $R/bundle-BUILD.txt; cp .devcarry/b32s/BUILD.txt $R/bundle-sm90-BUILD.txt
xz -dc .devcarry/b32a/payload.tar.xz | tar -xf - -C $X
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 260 bash .devcarry/b32a/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
grep -h "passed," $R/tests.out >> $R/rc.txt
run_san() { # tool binary timeout filter...
  local tool=$1 bin=$2 t=$3; shift 3
  CUBINS_SANITIZER=$tool timeout $t compute-sanitizer --tool $tool --error-exitcode 86 --print-limit 100 \
    $X/tests/$bin --include-ignored --test-threads=1 "$@" > $R/san/$tool-$bin-${@: -1}.log 2>&1
  echo "$tool $bin $* rc=$?" >> $R/rc.txt
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/san/$tool-$bin-${@: -1}.log >> $R/rc.txt
}
run_san memcheck gpu_gemm 80 --exact parity_bf16_every_entry_point
run_san racecheck gpu_gemm 140 --exact parity_bf16_every_entry_point
S=/tmp/b32sx; mkdir -p $S
xz -dc .devcarry/b32s/payload.tar.xz | tar -xf - -C $S
timeout 60 $S/tests/gpu_gemm --include-ignored --test-threads=1 --exact digests_match_the_record > $R/sm90-gpu_gemm.log 2>&1; echo "sm90 gpu_gemm rc=$?" >> $R/rc.txt
grep -h "test result" $R/sm90-gpu_gemm.log >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r32.tgz -C /tmp r32
cat $R/rc.txt; grep -hE "^FAIL" $R/tests.out | head; grep -hE "^test .*FAILED|panicked" $R/sm90-gpu_gemm.log | head
