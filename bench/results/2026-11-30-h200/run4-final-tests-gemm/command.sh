#!/usr/bin/env bash
# Final GPU tests; digests recorded by the recorder and checked again by the gates in a second
# process; full GEMM bench against cuBLAS.
set -u
R=/tmp/r4; mkdir -p $R; X=/tmp/b4x; mkdir -p $X
echo "pwd=$(pwd)" > $R/where.txt
xz -dc .devcarry/b4/payload.tar.xz | tar -xf - -C $X
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 150 bash .devcarry/b4/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
for fam in gemm fused; do
  grep -h "^HASH" $R/tests/tests/gpu_$fam.log > $R/${fam}_hashes.txt
  (grep -v '^HASH' tests/digests/$fam.txt; cat $R/${fam}_hashes.txt) > $R/$fam.txt
  for d in tests/digests /work/main/tests/digests; do mkdir -p $d && cp $R/$fam.txt $d/$fam.txt; done
  timeout 60 $X/tests/gpu_$fam --include-ignored --exact digests_match_the_record > $R/${fam}_gate_second_process.log 2>&1
  echo "$fam gate (second process) rc=$? hashes=$(wc -l < $R/${fam}_hashes.txt)" >> $R/rc.txt
done
timeout 330 bash .devcarry/b4/run.sh $R/gemm bench gemm > $R/gemm.out 2>&1; echo "gemm rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r4.tgz -C /tmp r4
cat $R/rc.txt; grep -hE "^FAIL|^      " $R/tests.out | head; grep -h "passed," $R/tests.out; grep -hE "^CHECK" $R/gemm.out | head -40
