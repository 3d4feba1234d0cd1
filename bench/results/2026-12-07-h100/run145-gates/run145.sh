# run145: the gates of bnext (branch packed-wide at af53e4d: tf32-tma's TMA route for TF32 and
# the backward norms' packed row groups that step apart) that run141 and run144 left open:
# 1. gpu_gemm's selector test (corrected to expect TF32 on the TMA kernel) and the GEMM digest
#    gate against the branch's record;
# 2. gpu_fused, every test and the digest gate (layernorm_takes_the_planned_walks corrected);
# 3. racecheck over RMSNorm's backward parity test, memcheck over both backward norms', then
#    racecheck over LayerNorm's with what time is left (run144's 70 s fell short).
# Here: git checkout packed-wide && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/bnext
# There: LIMIT=330 bash .devcarry/scripts/run145.sh
set -u
R=/tmp/r145 NAME=r145; source bench/tools/device.sh; mkdir -p $R/tests
gpu_info
unpack bnext
A=/tmp/bnext
# The gates read the record at the path the bundle was built at first: this tree's records.
mkdir -p /work/main/tests/digests && cp tests/digests/*.txt /work/main/tests/digests/
el "bundles ready"
timeout $(t 60) $A/tests/gpu_gemm --include-ignored --test-threads=1 --show-output selector_shapes_take_the_planned_kernel_and_match digests_match_the_record > $R/tests/gpu_gemm.log 2>&1
el "gpu_gemm selector + digest gate rc=$? $(grep -h 'test result' $R/tests/gpu_gemm.log | tail -1)"
grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/gpu_gemm.log | head -20 | cut -c1-300
STEP=100 gpu_tests $A gpu_fused
pack
# racecheck: RMSNorm's parity test (the packed shapes 300 x 4096 and 1000 x 3003 step apart),
# memcheck over both backward norms, then racecheck over LayerNorm's with what time is left.
timeout $(t 120) compute-sanitizer --tool racecheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --test-threads=1 --exact rmsnorm_backward_matches_the_reference > $R/racecheck-rmsnorm.log 2>&1
el "racecheck rmsnorm rc=$? $(grep -h 'RACECHECK SUMMARY\|test result' $R/racecheck-rmsnorm.log | tr '\n' ' ')"
pack
timeout $(t 60) compute-sanitizer --tool memcheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --test-threads=1 rmsnorm_backward_matches_the_reference layernorm_backward_matches_the_reference > $R/memcheck.log 2>&1
el "memcheck rc=$? $(grep -h 'ERROR SUMMARY\|test result' $R/memcheck.log | tr '\n' ' ')"
pack
timeout $(t 400) compute-sanitizer --tool racecheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --test-threads=1 layernorm_backward_matches_the_reference > $R/racecheck-layernorm.log 2>&1
el "racecheck layernorm rc=$? $(grep -h 'RACECHECK SUMMARY\|test result' $R/racecheck-layernorm.log | tr '\n' ' ')"
pack; ls -la $OUT
