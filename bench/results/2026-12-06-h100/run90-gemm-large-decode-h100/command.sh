# run90: the 16-bit large shapes (every layout) and the standard decode rows against cuBLAS,
# with run88's bundle (.devcarry/b88: the kernels of commit e47ade0). Run there as one
# command line, with .devcarry carried:
R=/tmp/r90; mkdir -p $R; A=.devcarry/b88; cp $A/BUILD.txt $R/bundle-BUILD.txt
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/nvidia-smi.csv
CUBINS_GEMM_TIERS=bf16,fp16 timeout 145 bash $A/run.sh $R/large bench gemm > $R/large.log 2>&1; echo rc=$?
grep -hE "^  (bf16|fp16) [a-z]{2} [0-9]+x[0-9]+x[0-9]+:" $R/large.log | sed -E 's/: p50 ([0-9.]+) us.*comparator p50 ([0-9.]+) us; speed ratio ([0-9.]+)x.*/ ours \1 cublas \2 ratio \3/' | head -60
(cd /tmp && tar czf $OUT/r90.tar.gz r90)
