#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck) on the RMSNorm backward gate (incl. the 1024-thread
# resident rows that prefetch) and on the GEMM parity gates (every entry point, new tiles);
# the forward row-op gates on the new shapes.
set -u
R=/tmp/r12; mkdir -p $R/san; X=/tmp/b9x; mkdir -p $X
cp .devcarry/b9/BUILD.txt $R/bundle-BUILD.txt 2>/dev/null
xz -dc .devcarry/b9/payload.tar.xz | tar -xf - -C $X
timeout 40 $X/tests/gpu_fused --include-ignored --exact row_ops_match_the_reference_bf16 row_ops_match_the_reference_f32 rmsnorm_backward_matches_the_reference > $R/fused_gates.log 2>&1; echo "fused gates rc=$?" >> $R/rc.txt
grep -h "test result" $R/fused_gates.log >> $R/rc.txt
run_san() { # tool binary timeout filter...
  local tool=$1 bin=$2 t=$3; shift 3
  CUBINS_SANITIZER=$tool timeout $t compute-sanitizer --tool $tool --error-exitcode 86 --print-limit 100 \
    $X/tests/$bin --include-ignored --test-threads=1 "$@" > $R/san/$tool-$bin.log 2>&1
  echo "$tool $bin rc=$?" >> $R/rc.txt
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/san/$tool-$bin.log >> $R/rc.txt
}
run_san memcheck gpu_fused 60 --exact rmsnorm_backward_matches_the_reference
run_san racecheck gpu_fused 80 --exact rmsnorm_backward_matches_the_reference
run_san memcheck gpu_gemm 70 parity_
run_san racecheck gpu_gemm 150 parity_
tar czf $OUT/r12.tgz -C /tmp r12
cat $R/rc.txt
