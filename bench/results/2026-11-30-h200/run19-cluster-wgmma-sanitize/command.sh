#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck on the RMSNorm backward gates (cluster kernel)
# and the bf16 GEMM parity gate (every entry point, the wgmma tile included).
set -u
R=/tmp/r19; mkdir -p $R/san; X=/tmp/b18x; mkdir -p $X
cp .devcarry/b18/BUILD.txt $R/bundle-BUILD.txt 2>/dev/null
xz -dc .devcarry/b18/payload.tar.xz | tar -xf - -C $X
run_san() { # tool binary timeout filter...
  local tool=$1 bin=$2 t=$3; shift 3
  CUBINS_SANITIZER=$tool timeout $t compute-sanitizer --tool $tool --error-exitcode 86 --print-limit 100 \
    $X/tests/$bin --include-ignored --test-threads=1 "$@" > $R/san/$tool-$bin.log 2>&1
  echo "$tool $bin $* rc=$?" >> $R/rc.txt
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/san/$tool-$bin.log >> $R/rc.txt
}
run_san memcheck gpu_fused 70 rmsnorm_backward_
run_san racecheck gpu_fused 90 rmsnorm_backward_
run_san memcheck gpu_gemm 60 --exact parity_bf16_every_entry_point
run_san racecheck gpu_gemm 120 --exact parity_bf16_every_entry_point
tar czf $OUT/r19.tgz -C /tmp r19
cat $R/rc.txt
