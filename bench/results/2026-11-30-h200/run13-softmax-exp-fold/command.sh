#!/usr/bin/env bash
# softmax forward with 1 / sum folded into the exponent: fused gates with the digest recorder,
# the fused digests re-recorded and gated again in a second process, then the fused benches.
set -u
R=/tmp/r14; mkdir -p $R; X=/tmp/b10x; mkdir -p $X
cp .devcarry/b10/BUILD.txt $R/bundle-BUILD.txt
xz -dc .devcarry/b10/payload.tar.xz | tar -xf - -C $X
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/smi0.txt 2>&1
timeout 60 $X/tests/gpu_fused --include-ignored --test-threads=1 --show-output > $R/gpu_fused.log 2>&1; echo "gpu_fused rc=$?" >> $R/rc.txt
grep -h "test result" $R/gpu_fused.log >> $R/rc.txt
grep -h "^HASH" $R/gpu_fused.log > $R/fused_hashes.txt
(grep -v '^HASH' tests/digests/fused.txt; cat $R/fused_hashes.txt) > $R/fused.txt
for d in tests/digests /work/main/tests/digests; do mkdir -p $d && cp $R/fused.txt $d/fused.txt; done
timeout 40 $X/tests/gpu_fused --include-ignored --exact digests_match_the_record > $R/fused_gate_second_process.log 2>&1
echo "fused gate (second process) rc=$? hashes=$(wc -l < $R/fused_hashes.txt)" >> $R/rc.txt
timeout 200 bash .devcarry/b10/run.sh $R/fused bench fused > $R/fused.out 2>&1; echo "fused bench rc=$?" >> $R/rc.txt
tar czf $OUT/r14.tgz -C /tmp r14
cat $R/rc.txt; grep -hE "^CHECK" $R/fused.out | grep -E "FAIL|softmax_fwd" | head -20
