# run146: bln (branch ln640: the LayerNorm backward's sm_90 build at 640 threads and 96
# registers without the streamed walk, rows past its resident tile through the cluster kernel)
# against bmain (main), in order of need:
# 1. gpu_fused (every test, the digest gate skipped), the record merged (expected: keys of
#    LayerNorm backward shapes the sm_90 build streamed before may move to the cluster kernel;
#    nothing else changed), the gate in a second process; racecheck and memcheck over
#    layernorm_backward_matches_the_reference;
# 2. A/B, two rounds (bmain first, then bln first), graph replay: the LayerNorm backward at rows
#    1024, 4000, 16384, 32768 x cols 768, 2048, 3072, 6144, 8192, 14336, 20000, 32768.
# Here (bundles in .devcarry, the script copied to .devcarry/scripts; bench/tools/README.md):
#   git checkout main && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/bmain
#   git checkout ln640 && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/bln
# There: LIMIT=560 bash .devcarry/scripts/run146.sh
# Table: python3 bench/tools/abx.py r146 base new
set -u
R=/tmp/r146 NAME=r146; source bench/tools/device.sh; mkdir -p $R/tests
gpu_info
unpack bln bmain
A=/tmp/bln; Z=/tmp/bmain
el "bundles ready"
STEP=110 gpu_tests $A gpu_fused --skip digests_match_the_record
digest_gate $A gpu_fused fused
pack
STEP=150 sanitize $A gpu_fused layernorm_backward_matches_the_reference
pack
run() { timeout $(t $3) $2/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
ab() {
  CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1024,4000,16384,32768 CUBINS_FUSED_GRID_COLS=768,2048,3072,6144,8192,14336,20000,32768 \
    CUBINS_FUSED_GRID_OPS=layernorm_bwd run "$@"
}
ab base1 $Z 45; ab new1 $A 45; pack
ab new2 $A 45; ab base2 $Z 45
grep -h "CHECK" $R/fused-new1.log | head -40
pack; ls -la $OUT
