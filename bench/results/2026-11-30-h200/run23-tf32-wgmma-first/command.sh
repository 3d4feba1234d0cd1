#!/usr/bin/env bash
# TF32 on wgmma (operand pass + NT wgmma kernel): every GEMM GPU gate, the recorder (new
# tf32 wgmma digest keys), the TF32 bench against cuBLAS TF32, memcheck/racecheck on the
# TF32 gates.
set -u
R=/tmp/r23; mkdir -p $R/san; X=/tmp/b23x; mkdir -p $X
cp .devcarry/b23/BUILD.txt $R/bundle-BUILD.txt
xz -dc .devcarry/b23/payload.tar.xz | tar -xf - -C $X
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 200 $X/tests/gpu_gemm --include-ignored --test-threads=1 --nocapture > $R/gpu_gemm.log 2>&1; echo "gpu_gemm rc=$?" >> $R/rc.txt
grep -h "test result" $R/gpu_gemm.log >> $R/rc.txt
CUBINS_GEMM_TIERS=tf32 timeout 200 bash .devcarry/b23/run.sh $R/gemm bench gemm > $R/gemm.out 2>&1; echo "gemm rc=$?" >> $R/rc.txt
run_san() { # tool binary timeout filter...
  local tool=$1 bin=$2 t=$3; shift 3
  CUBINS_SANITIZER=$tool timeout $t compute-sanitizer --tool $tool --error-exitcode 86 --print-limit 100 \
    $X/tests/$bin --include-ignored --test-threads=1 "$@" > $R/san/$tool-$bin-$1.log 2>&1
  echo "$tool $bin $* rc=$?" >> $R/rc.txt
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/san/$tool-$bin-$1.log >> $R/rc.txt
}
run_san memcheck gpu_gemm 60 tf32_
run_san racecheck gpu_gemm 90 tf32_
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r23.tgz -C /tmp r23
cat $R/rc.txt; grep -hE "^test .*FAILED|panicked" $R/gpu_gemm.log | head; grep -hE "^CHECK|speed ratio" $R/gemm.out | head -40
