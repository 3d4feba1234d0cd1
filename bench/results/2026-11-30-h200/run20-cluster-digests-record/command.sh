#!/usr/bin/env bash
# Record the fused digests (with the wide-row RMSNorm backward case) from the sm_90 + sm_90a
# bundle and from an sm_90-only bundle.
set -u
R=/tmp/r20; mkdir -p $R
for b in b20a b20b; do
  X=/tmp/$b; mkdir -p $X; xz -dc .devcarry/$b/payload.tar.xz | tar -xf - -C $X
  cp .devcarry/$b/BUILD.txt $R/$b-BUILD.txt
  timeout 60 $X/tests/gpu_fused --include-ignored --exact record_fused_digests digests_match_the_record --test-threads=1 --nocapture > $R/$b-fused.log 2>&1
  echo "$b rc=$?" >> $R/rc.txt
done
tar czf $OUT/r20.tgz -C /tmp r20
cat $R/rc.txt; grep -h "rmsnorm_bwd_cluster\|32768\|x16384" $R/*-fused.log | head -20
