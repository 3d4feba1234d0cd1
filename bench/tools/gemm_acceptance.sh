# gemm_acceptance.sh: issue 22's acceptance sets for one GPU bundle (.devcarry/$B, main's code by
# default), each against cuBLAS in one process, in three device calls of a few minutes each:
#   PART=1  gpu_gemm (every test, the committed digest record held), memcheck and racecheck over
#           the TMA / wgmma bit test and the TF32 rounding test; the GEMM bench's large shapes
#           (every tier and layout) and its decode row;
#   PART=2  the random sweep (48 seeded shapes, seed 2026, every layout, a quarter with odd
#           leading dimensions);
#   PART=3  the decode grid (M in 1, 8, 16 x N, K in 4096, 8192, 14336, 28672, NN and NT).
# From the repository root with .devcarry carried:
#   B=bmain PART=1 LIMIT=560 bash .devcarry/scripts/gemm_acceptance.sh   (then PART=2, PART=3)
# Results in $OUT/gemm-acceptance-partN.tar.gz; the bench's lines: `speed ratio`, `SWEEP`, `GRID`.
set -u
B=${B:-bmain}; PART=${PART:-1}
R=/tmp/gemm-acceptance NAME=gemm-acceptance-part$PART; source bench/tools/device.sh
mkdir -p $R/tests; gpu_info part$PART; unpack $B; A=/tmp/$B
el "bundle ready"
bench() { timeout $(t $2) $A/benches/gemm --results $R/$1 > $R/gemm-$1.log 2>&1; el "$1 rc=$? $(grep -c 'speed ratio' $R/gemm-$1.log) readings"; }
case $PART in
1)
  STEP=200 gpu_tests $A gpu_gemm --skip record_gemm_digests
  STEP=90 sanitize $A gpu_gemm tma_and_wgmma_kernels_give_the_same_bits tf32_rounds_operands_to_nearest_on_every_route
  pack
  bench large 260 ;;
2) CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 bench random 540 ;;
3) CUBINS_GEMM_DECODE_GRID=1 bench decode 540 ;;
esac
grep -h "speed ratio\|^SWEEP\|^GRID" $R/gemm-*.log | cut -c1-150 | tail -60
pack; ls -la $OUT
