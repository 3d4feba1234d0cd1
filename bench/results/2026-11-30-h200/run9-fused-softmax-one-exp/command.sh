#!/usr/bin/env bash
# GPU tests on the new build; the fused digests re-recorded (softmax forward now evaluates each
# exp once) and both digest gates run again in a second process; fused benches vs torch eager.
set -u
R=/tmp/r10; mkdir -p $R; X=/tmp/b7x; mkdir -p $X
echo "pwd=$(pwd)" > $R/where.txt
cp .devcarry/b7/BUILD.txt $R/bundle-BUILD.txt 2>/dev/null
xz -dc .devcarry/b7/payload.tar.xz | tar -xf - -C $X
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 170 bash .devcarry/b7/run.sh $R/tests tests > $R/tests.out 2>&1; echo "tests rc=$?" >> $R/rc.txt
for fam in fused gemm; do
  grep -h "^HASH" $R/tests/tests/gpu_$fam.log > $R/${fam}_hashes.txt
  (grep -v '^HASH' tests/digests/$fam.txt; cat $R/${fam}_hashes.txt) > $R/$fam.txt
  for d in tests/digests /work/main/tests/digests; do mkdir -p $d && cp $R/$fam.txt $d/$fam.txt; done
  timeout 60 $X/tests/gpu_$fam --include-ignored --exact digests_match_the_record > $R/${fam}_gate_second_process.log 2>&1
  echo "$fam gate (second process) rc=$? hashes=$(wc -l < $R/${fam}_hashes.txt)" >> $R/rc.txt
done
timeout 90 python3 benches/torch_fused.py $R/torch_fused.json > $R/torch.out 2>&1; echo "torch rc=$?" >> $R/rc.txt
CUBINS_TORCH_FUSED_JSON=$R/torch_fused.json timeout 220 bash .devcarry/b7/run.sh $R/fused bench fused > $R/fused.out 2>&1; echo "fused rc=$?" >> $R/rc.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi1.txt 2>&1
tar czf $OUT/r10.tgz -C /tmp r10
cat $R/rc.txt; grep -hE "^FAIL|^      " $R/tests.out | head; grep -h "passed," $R/tests.out; grep -hE "^CHECK" $R/fused.out | grep -E "FAIL|softmax_fwd|rmsnorm_bwd" | head -40
