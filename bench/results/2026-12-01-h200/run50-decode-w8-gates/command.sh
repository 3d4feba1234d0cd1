#!/usr/bin/env bash
# The 8-warp large-N decode kernels of run49 in the crate (bundles b50a: CUBINS_ARCHS="90;90a",
# b50s: "90"; cargo xtask gpu-bundle --out .devcarry/b50a / b50s): every GPU test binary from
# b50a, the digest gate from b50s, memcheck on the 16-bit parity gates (every entry point on
# its tail shapes) and racecheck on the bf16 one.
set -u
R=/tmp/r50; mkdir -p $R/san; X=/tmp/b50x; mkdir -p $X /tmp/b50sx
cp .devcarry/b50a/BUILD.txt $R/bundle-BUILD.txt; cp .devcarry/b50s/BUILD.txt $R/bundle-sm90-BUILD.txt
xz -dc .devcarry/b50a/payload.tar.xz | tar -xf - -C $X
xz -dc .devcarry/b50s/payload.tar.xz | tar -xf - -C /tmp/b50sx
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 220 bash .devcarry/b50a/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
grep -h "passed," $R/tests.out >> $R/rc.txt
timeout 60 /tmp/b50sx/tests/gpu_gemm --include-ignored --test-threads=1 --exact digests_match_the_record > $R/sm90-digests.log 2>&1; echo "sm90 digests rc=$?" >> $R/rc.txt
grep -h "test result" $R/sm90-digests.log >> $R/rc.txt
run_san() { # tool binary timeout filter...
  local tool=$1 bin=$2 t=$3; shift 3
  CUBINS_SANITIZER=$tool timeout $t compute-sanitizer --tool $tool --error-exitcode 86 --print-limit 100 \
    $X/tests/$bin --include-ignored --test-threads=1 "$@" > $R/san/$tool-$bin-${@: -1}.log 2>&1
  echo "$tool $bin $* rc=$?" >> $R/rc.txt
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/san/$tool-$bin-${@: -1}.log >> $R/rc.txt
}
run_san memcheck gpu_gemm 75 --exact parity_bf16_every_entry_point
run_san memcheck gpu_gemm 75 --exact parity_fp16_every_entry_point
run_san racecheck gpu_gemm 120 --exact parity_bf16_every_entry_point
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r50.tgz -C /tmp r50
cat $R/rc.txt; grep -hE "^FAIL" $R/tests.out | head
