#!/usr/bin/env bash
set -u
X=.devcarry/explore/explore
timeout 150 ncu --clock-control none --set full --import-source no -k regex:k_mma --launch-skip 1 -c 1 -o /tmp/nnb $X one "nn_b " > $OUT/ncu_run.txt 2>&1; echo "ncu rc=$?"
ncu -i /tmp/nnb.ncu-rep --page source --csv --print-source sass > $OUT/nnb_sass.csv 2> $OUT/src_err.txt; echo "src rc=$?"
ncu -i /tmp/nnb.ncu-rep --page details > $OUT/nnb_details.txt 2>&1; echo "details rc=$?"
ncu -i /tmp/nnb.ncu-rep --page raw --csv > $OUT/nnb_raw.csv 2>&1; echo "raw rc=$?"
ls -la $OUT; tail -3 $OUT/ncu_run.txt
