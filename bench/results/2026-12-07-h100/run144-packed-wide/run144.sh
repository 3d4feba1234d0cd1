# run144: bpack (branch packed-wide: the backward norms pack row groups that span warps several
# to a block, each reducing behind its own named barrier, row_group_reduce in reduce.cuh; packed
# as evenly as the steps allow) against bmain (main), in order of need:
# 1. gpu_fused (every test, the digest gate skipped), the record merged (expected: nothing
#    changed or added: the recorded backward shapes fix their ranges, which packing leaves
#    alone), the gate in a second process; racecheck and memcheck over both backward norms'
#    parity tests (packed shapes 300 x 4096 and 1000 x 3003 step apart);
# 2. A/B, two rounds (bmain first, then bpack first), graph replay: the backward norms at rows
#    1024, 4000, 16384, 32768 x cols 768, 2048, 3072, 6144, 8192, 14336, 32768.
# Here (bundles in .devcarry, the script copied to .devcarry/scripts; bench/tools/README.md):
#   git checkout main && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/bmain
#   git checkout packed-wide && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/bpack
# There: LIMIT=560 bash .devcarry/scripts/run144.sh
# Table: python3 bench/tools/abx.py r144 base new
set -u
R=/tmp/r144 NAME=r144; source bench/tools/device.sh; mkdir -p $R/tests
gpu_info
unpack bpack bmain
A=/tmp/bpack; Z=/tmp/bmain
el "bundles ready"
STEP=110 gpu_tests $A gpu_fused --skip digests_match_the_record
cp tests/digests/fused.txt $R/fused-digests-main.txt
python3 bench/tools/merge_digests.py $R/fused-digests-main.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
tail -12 $R/digest-merge.log
DIG=${DIG:-/work/main/tests/digests/fused.txt}
mkdir -p $(dirname $DIG); cp $R/fused-digests.txt $DIG
timeout $(t 40) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"
pack
STEP=70 sanitize $A gpu_fused rmsnorm_backward_matches_the_reference layernorm_backward_matches_the_reference
pack
run() { timeout $(t $3) $2/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
ab() {
  CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1024,4000,16384,32768 CUBINS_FUSED_GRID_COLS=768,2048,3072,6144,8192,14336,32768 \
    CUBINS_FUSED_GRID_OPS=rmsnorm_bwd,layernorm_bwd run "$@"
}
ab base1 $Z 65; ab new1 $A 65; pack
ab new2 $A 65; ab base2 $Z 65
grep -h "CHECK" $R/fused-new1.log | head -60
pack; ls -la $OUT
