# run89: on run88's warm machine, with run88's bundle (.devcarry/b88): #40 on every schedule,
# the decode grid's N = 14336 and 28672 rows (NN), and the random sweep's shapes 0-34 again
# under the capped rotation. Run there as one command line, with .devcarry carried:
R=/tmp/r89; mkdir -p $R; A=.devcarry/b88; cp $A/BUILD.txt $R/bundle-BUILD.txt
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=40 CUBINS_GEMM_SWEEP=1 timeout 60 bash $A/run.sh $R/c40 bench gemm --quick > $R/c40.log 2>&1
grep -h "speed ratio" $R/c40.log | cut -c1-170
CUBINS_GEMM_DECODE_GRID=1 CUBINS_GEMM_DECODE_GRID_N=14336,28672 CUBINS_GEMM_TIERS=bf16 CUBINS_GEMM_LAYOUTS=nn timeout 150 bash $A/run.sh $R/decode bench gemm > $R/decode.log 2>&1
grep -h "^GRID" $R/decode.log; (cd /tmp && tar czf $OUT/r89.tar.gz r89)
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=0..35 timeout 170 bash $A/run.sh $R/random bench gemm --quick > $R/random.log 2>&1
grep -h "^SWEEP" $R/random.log | cut -c1-150; (cd /tmp && tar czf $OUT/r89.tar.gz r89)
