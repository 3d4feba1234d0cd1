# run96: the whole random sweep on two candidates, then the gates. b96: the element path reads
# each chunk as its two aligned 16-byte blocks (all of a batch's loads in flight before any is
# joined); b97: main's element path. Both skip the operand pass below K = 65. Bundles:
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b96   (and b97)
# There, with .devcarry carried: bash .devcarry/run96.sh
set -u
R=/tmp/r96; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r96.tar.gz r96); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-585}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b96 b97; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
# 1. the whole random sweep on each
for b in b96 b97; do
  CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 timeout $(t 130) bash .devcarry/$b/run.sh $R/random-$b bench gemm --quick > $R/random-$b.log 2>&1; el "random $b rc=$?"
  grep -h "^SWEEP" $R/random-$b.log | cut -c1-150 | tail -1
  pack
done
# 2. b96: every GEMM GPU test but the digest gate; record, merge, gate in a second process;
#    memcheck on the unaligned cases. b97: the unaligned cases.
D=/tmp/b96
timeout $(t 160) $D/tests/gpu_gemm --include-ignored --test-threads=1 --show-output --skip digests_match_the_record --skip record_gemm_digests > $R/gpu_gemm.log 2>&1; el "gpu_gemm rc=$?"
grep -h "^test \|test result" $R/gpu_gemm.log | grep -v " ok$"; grep -h "panicked" -A2 $R/gpu_gemm.log | head -8 | cut -c1-300
timeout $(t 60) $D/tests/gpu_gemm --ignored --exact record_gemm_digests --show-output > $R/gemm-record.log 2>&1; el "record rc=$?"
DIG=/work/main/tests/digests/gemm.txt; mkdir -p $(dirname $DIG); [ -f $DIG ] || cp tests/digests/gemm.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/gemm.txt $R/gemm-record.log $R/gemm-digests.txt > $R/digest-merge.log; tail -4 $R/digest-merge.log
cp $R/gemm-digests.txt $DIG
timeout $(t 60) $D/tests/gpu_gemm --include-ignored --exact digests_match_the_record --show-output > $R/gemm-gate.log 2>&1; el "digest gate rc=$? $(grep -h 'test result' $R/gemm-gate.log)"
pack
timeout $(t 60) compute-sanitizer --tool memcheck --error-exitcode 86 $D/tests/gpu_gemm --include-ignored --exact unaligned_operands_are_copied_or_read_by_element_and_match > $R/memcheck-unaligned.log 2>&1; el "memcheck unaligned rc=$?"
grep -h "ERROR SUMMARY\|test result" $R/memcheck-unaligned.log
timeout $(t 40) /tmp/b97/tests/gpu_gemm --include-ignored --exact unaligned_operands_are_copied_or_read_by_element_and_match > $R/b97-unaligned.log 2>&1; el "b97 unaligned rc=$?"
grep -h "test result" $R/b97-unaligned.log
pack; ls -la $OUT
