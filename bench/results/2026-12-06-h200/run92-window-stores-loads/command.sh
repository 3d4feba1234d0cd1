# run92: C stored in aligned four-element windows where ldc or C's base is off them; no operand
# pass below K = 65; the operand pass and the element path read 16-byte chunks as two aligned
# blocks and a funnel shift. Bundles built here:
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b92    (this change)
#   .devcarry/b88                                                       (main's kernels, e47ade0)
# There, with .devcarry carried: bash .devcarry/run92.sh
set -u
R=/tmp/r92; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r92.tar.gz r92); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-580}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b92 b88; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=.devcarry/b92; D=/tmp/b92; Z=.devcarry/b88
# 1. the sweep's cliffs on this change and on main's kernels, one process each
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=40,15,31,10 timeout $(t 80) bash $A/run.sh $R/cliffs bench gemm --quick > $R/cliffs.log 2>&1; el "cliffs rc=$?"
grep -h "^SWEEP #" $R/cliffs.log | cut -c1-150
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=40,15,31,10 timeout $(t 80) bash $Z/run.sh $R/cliffs-base bench gemm --quick > $R/cliffs-base.log 2>&1; el "cliffs base rc=$?"
grep -h "^SWEEP #" $R/cliffs-base.log | cut -c1-150
pack
# 2. every GEMM GPU test but the digest gate; then record, merge, gate in a second process
timeout $(t 200) $D/tests/gpu_gemm --include-ignored --test-threads=1 --show-output --skip digests_match_the_record --skip record_gemm_digests > $R/gpu_gemm.log 2>&1; el "gpu_gemm rc=$?"
grep -h "^test \|test result" $R/gpu_gemm.log | grep -v " ok$"; grep -h "panicked" -A2 $R/gpu_gemm.log | head -8 | cut -c1-300
timeout $(t 60) $D/tests/gpu_gemm --ignored --exact record_gemm_digests --show-output > $R/gemm-record.log 2>&1; el "record rc=$?"
DIG=/work/main/tests/digests/gemm.txt; mkdir -p $(dirname $DIG); [ -f $DIG ] || cp tests/digests/gemm.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/gemm.txt $R/gemm-record.log $R/gemm-digests.txt > $R/digest-merge.log; tail -4 $R/digest-merge.log
cp $R/gemm-digests.txt $DIG
timeout $(t 60) $D/tests/gpu_gemm --include-ignored --exact digests_match_the_record --show-output > $R/gemm-gate.log 2>&1; el "digest gate rc=$? $(grep -h 'test result' $R/gemm-gate.log)"
pack
# 3. memcheck and racecheck on the unaligned cases (window stores, windowed element path and pass)
for tool in memcheck racecheck; do
  timeout $(t 150) compute-sanitizer --tool $tool --error-exitcode 86 $D/tests/gpu_gemm --include-ignored --exact unaligned_operands_are_copied_or_read_by_element_and_match > $R/$tool-unaligned.log 2>&1; el "$tool unaligned rc=$?"
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/$tool-unaligned.log
done
pack; ls -la $OUT
