# run140: the TF32 explorer (src/tf32_ws.cu): rounding to nearest inside a warp-specialized wgmma
# kernel (a producer warpgroup: global -> registers -> cvt.rna -> swizzled shared memory; for NN
# transposing B into the K-major tile) against the rounding pass + the same kernel on TMA loads,
# and TMA loads of the raw (truncated) operands, each paired against cuBLAS TF32 in one process;
# NT and NN at the four large shapes and a tail shape; then memcheck and racecheck over
# one producer config of each layout at a small shape.
# Here:   make -C bench/results/2026-12-07-h100/run140-tf32-producer/src && mkdir -p .devcarry \
#           && cp bench/results/2026-12-07-h100/run140-tf32-producer/src/tf32_ws .devcarry/
# There, from the repository root with .devcarry carried:
#   LIMIT=330 bash .devcarry/scripts/run140.sh   (about 2 minutes; the script copied to .devcarry/scripts)
set -u
R=/tmp/r140 NAME=r140; source bench/tools/device.sh
gpu_info
X=.devcarry/tf32_ws; sha256sum $X > $R/binary.sha256
SHAPES=""
for lay in NT NN; do SHAPES="$SHAPES $lay 4096 4096 4096 $lay 8192 8192 8192 $lay 4096 14336 4096 $lay 4096 4096 14336 $lay 1000 3000 1000"; done
# Each config in its own process: a hang ends only its own.
for cfg in tma_trunc pass_tma reg_b6_d2 reg_b4_d3 reg_b6_d4 reg_b12_d2 nn_b12_d2 nn_b6_d4; do
  TW_CONFIGS=$cfg timeout $(t 90) $X $SHAPES > $R/$cfg.log 2>&1
  el "$cfg rc=$? $(grep -c '^ROW.* OK$' $R/$cfg.log) OK, $(grep -c 'WRONG' $R/$cfg.log) WRONG"
  grep -h "^ROW" $R/$cfg.log | awk '{print "  ", $3, $4, $5, $8, $9, $12, $16, $17, $18, $19}'
  pack
done
for tool in memcheck racecheck; do
  for cl in "reg_b6_d2 NT" "nn_b6_d4 NN"; do
    set -- $cl
    TW_CONFIGS=$1 timeout $(t 60) compute-sanitizer --tool $tool --error-exitcode 86 $X $2 256 512 96 > $R/$tool-$1.log 2>&1
    el "$tool $1 rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $R/$tool-$1.log | tr '\n' ' ')"
  done
done
pack; ls -la $OUT
