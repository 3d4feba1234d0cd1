#!/usr/bin/env bash
# Gate the digests in processes after the recording (run20): fused from the sm_90 + sm_90a
# bundle and from an sm_90-only bundle, GEMM from the sm_90-only bundle.
set -u
R=/tmp/r21; mkdir -p $R
for b in b21a b21b; do
  X=/tmp/$b; mkdir -p $X; xz -dc .devcarry/$b/payload.tar.xz | tar -xf - -C $X
  cp .devcarry/$b/BUILD.txt $R/$b-BUILD.txt
  timeout 60 $X/tests/gpu_fused --include-ignored --exact digests_match_the_record > $R/$b-fused.log 2>&1
  echo "$b gpu_fused digests rc=$?" >> $R/rc.txt
done
timeout 60 /tmp/b21b/tests/gpu_gemm --include-ignored --exact digests_match_the_record > $R/b21b-gemm.log 2>&1
echo "b21b gpu_gemm digests rc=$?" >> $R/rc.txt
grep -h "test result" $R/*.log >> $R/rc.txt
tar czf $OUT/r21.tgz -C /tmp r21
cat $R/rc.txt
