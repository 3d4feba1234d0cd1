# run143: branges (branch bwd-ranges: the backward norms' default wave of one-row blocks keeps
# to 512 threads an SM, RANGE_THREADS_PER_SM) against bfew (main's code: the few-rows rules):
# 1. gpu_fused (every test, the digest gate skipped), the record merged (possible changes: dw
#    and db of the backward norms where a default wave of one-row blocks exceeded 512 threads
#    an SM and the rows outnumber the new wave), the gate in a second process; racecheck and
#    memcheck over rmsnorm_backward_matches_the_reference;
# 2. A/B, two rounds (bfew first, then branges first), graph replay: the backward norms at rows
#    1024, 4000, 16384, 32768 x cols 768, 2048, 3072, 8192, 14336, 32768.
# Here (bundles in .devcarry, the script copied to .devcarry/scripts; bench/tools/README.md):
#   git checkout main && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/bfew
#   git checkout bwd-ranges && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/branges
# There: LIMIT=300 bash .devcarry/scripts/run143.sh
# Table: python3 bench/tools/abx.py r143 base new
set -u
R=/tmp/r143 NAME=r143; source bench/tools/device.sh; mkdir -p $R/tests
gpu_info
unpack branges bfew
A=/tmp/branges; Z=/tmp/bfew
el "bundles ready"
timeout $(t 80) $A/tests/gpu_fused --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/gpu_fused.log 2>&1
el "gpu_fused rc=$? $(grep -h 'test result' $R/tests/gpu_fused.log | tail -1)"
grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/gpu_fused.log | head -20 | cut -c1-300
cp tests/digests/fused.txt $R/fused-digests-main.txt
python3 bench/tools/merge_digests.py $R/fused-digests-main.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
tail -12 $R/digest-merge.log
DIG=${DIG:-/work/main/tests/digests/fused.txt}
mkdir -p $(dirname $DIG); cp $R/fused-digests.txt $DIG
timeout $(t 40) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"
for tool in racecheck memcheck; do
  timeout $(t 40) compute-sanitizer --tool $tool --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact rmsnorm_backward_matches_the_reference --test-threads=1 > $R/$tool.log 2>&1
  el "$tool rc=$? $(grep -h 'RACECHECK SUMMARY\|ERROR SUMMARY\|test result' $R/$tool.log | tr '\n' ' ')"
done
pack
run() { timeout $(t $3) $2/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
ab() {
  CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1024,4000,16384,32768 CUBINS_FUSED_GRID_COLS=768,2048,3072,8192,14336,32768 \
    CUBINS_FUSED_GRID_OPS=rmsnorm_bwd,layernorm_bwd run "$@"
}
ab base1 $Z 55; ab new1 $A 55; pack
ab new2 $A 55; ab base2 $Z 55
pack; ls -la $OUT
