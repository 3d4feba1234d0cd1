# run141: btma (branch tf32-tma: TF32 after its operand pass on the warp-specialized TMA kernel,
# gemm_tf32_nt_tma_128x256, with the f32 staged epilogue; the 16-bit TMA kernels' SASS unchanged)
# against bmain (main: TF32 on the cp.async wgmma kernel after the same pass), in order of need:
# 1. gpu_gemm (every test, the digest gate skipped), the record merged (expected: 6 keys added,
#    gemm_tf32_nt_tma_128x256(nn|tn|nt)@sm_90a:300x520x200/f32 with and without +bias; nothing
#    changed), the gate in a second process; memcheck and racecheck over the TMA/wgmma bit test
#    (TF32 included) and the TF32 rounding test;
# 2. the GEMM bench's TF32 tier (the five large shapes in every layout, paired with cuBLAS TF32,
#    the pass timed with the kernel), bmain then bnew, then bnew then bmain.
# Here (bundles in .devcarry, the script copied to .devcarry/scripts; bench/tools/README.md):
#   git checkout main && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/bmain
#   git checkout tf32-tma && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/btma
# There, from the repository root with .devcarry carried:
#   LIMIT=560 bash .devcarry/scripts/run141.sh   (about 5 minutes)
set -u
R=/tmp/r141 NAME=r141; source bench/tools/device.sh; mkdir -p $R/tests
gpu_info
unpack btma bmain
A=/tmp/btma; Z=/tmp/bmain
el "bundles ready"
timeout $(t 200) $A/tests/gpu_gemm --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/gpu_gemm.log 2>&1
el "gpu_gemm rc=$? $(grep -h 'test result' $R/tests/gpu_gemm.log | tail -1)"
grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/gpu_gemm.log | head -30 | cut -c1-400
grep -h "^BITS Tf32" $R/tests/gpu_gemm.log | cut -c1-200
cp tests/digests/gemm.txt $R/gemm-digests-main.txt
python3 bench/tools/merge_digests.py $R/gemm-digests-main.txt $R/tests/gpu_gemm.log $R/gemm-digests.txt > $R/digest-merge.log
tail -8 $R/digest-merge.log
# The gate reads the record at the path the bundle was built at (CARGO_MANIFEST_DIR) first.
DIG=${DIG:-/work/main/tests/digests/gemm.txt}; mkdir -p $(dirname $DIG); cp $R/gemm-digests.txt $DIG
timeout $(t 60) $A/tests/gpu_gemm --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_gemm-gate.log 2>&1
el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_gemm-gate.log)"
for tool in memcheck racecheck; do
  timeout $(t 90) compute-sanitizer --tool $tool --error-exitcode 86 $A/tests/gpu_gemm --include-ignored --test-threads=1 tma_and_wgmma_kernels_give_the_same_bits tf32_rounds_operands_to_nearest_on_every_route > $R/$tool.log 2>&1
  el "$tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|test result' $R/$tool.log | tr '\n' ' ')"
done
pack
export CUBINS_GEMM_TIERS=tf32
run() { timeout $(t $3) $2/benches/gemm --results $R/$1 > $R/gemm-$1.log 2>&1; el "$1 rc=$? $(grep -c 'speed ratio' $R/gemm-$1.log) readings"; }
run base1 $Z 80; run new1 $A 80; pack
run new2 $A 80; run base2 $Z 80
grep -h "speed ratio" $R/gemm-*.log | sed 's/: p50.*speed ratio/:/' | cut -c1-100
pack; ls -la $OUT
