# run95: no operand pass below K = 65, and the element path and the operand pass reading
# 16-byte chunks as two aligned blocks and a funnel shift (bundle b95:
# CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b95); b93s (the same with
# generic loads) and b88 (main's kernels, e47ade0) beside it on the cliffs; the gates; the
# whole random sweep. There, with .devcarry carried: bash .devcarry/run95.sh
set -u
R=/tmp/r95; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r95.tar.gz r95); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-585}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/b95; D=/tmp/b95; mkdir -p $D; cp $B/BUILD.txt $R/bundle-b95-BUILD.txt
xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle b95 verified"
# 0. the sweep's cliffs on b95, b93s, b88 (one process each); #15 and #31 on b95 without a
#    workspace (the element path instead of the operand pass)
for b in b95 b93s b88; do
  CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=40,10,31,15 timeout $(t 40) bash .devcarry/$b/run.sh $R/cliffs-$b bench gemm --quick > $R/cliffs-$b.log 2>&1; el "cliffs $b rc=$?"
  grep -h "^SWEEP #" $R/cliffs-$b.log | cut -c1-150
done
CUBINS_GEMM_NO_WORKSPACE=1 CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=15,31,10 timeout $(t 40) bash $B/run.sh $R/cliffs-no-ws bench gemm --quick > $R/cliffs-no-ws.log 2>&1; el "cliffs no workspace rc=$?"
grep -h "^SWEEP #" $R/cliffs-no-ws.log | cut -c1-150
pack
# 1. every GEMM GPU test but the digest gate; then record, merge, gate in a second process
timeout $(t 160) $D/tests/gpu_gemm --include-ignored --test-threads=1 --show-output --skip digests_match_the_record --skip record_gemm_digests > $R/gpu_gemm.log 2>&1; el "gpu_gemm rc=$?"
grep -h "^test \|test result" $R/gpu_gemm.log | grep -v " ok$"; grep -h "panicked" -A2 $R/gpu_gemm.log | head -8 | cut -c1-300
timeout $(t 60) $D/tests/gpu_gemm --ignored --exact record_gemm_digests --show-output > $R/gemm-record.log 2>&1; el "record rc=$?"
DIG=/work/main/tests/digests/gemm.txt; mkdir -p $(dirname $DIG); [ -f $DIG ] || cp tests/digests/gemm.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/gemm.txt $R/gemm-record.log $R/gemm-digests.txt > $R/digest-merge.log; tail -4 $R/digest-merge.log
cp $R/gemm-digests.txt $DIG
timeout $(t 60) $D/tests/gpu_gemm --include-ignored --exact digests_match_the_record --show-output > $R/gemm-gate.log 2>&1; el "digest gate rc=$? $(grep -h 'test result' $R/gemm-gate.log)"
pack
# 2. memcheck on the unaligned cases (window loads in the GEMM and the operand pass, the
#    element path at K < 65); racecheck on the split-K cases
timeout $(t 60) compute-sanitizer --tool memcheck --error-exitcode 86 $D/tests/gpu_gemm --include-ignored --exact unaligned_operands_are_copied_or_read_by_element_and_match > $R/memcheck-unaligned.log 2>&1; el "memcheck unaligned rc=$?"
grep -h "ERROR SUMMARY\|test result" $R/memcheck-unaligned.log
timeout $(t 90) compute-sanitizer --tool racecheck --error-exitcode 86 $D/tests/gpu_gemm --include-ignored --exact split_k_matches_float64_and_repeats_bit_for_bit > $R/racecheck-splitk.log 2>&1; el "racecheck split-k rc=$?"
grep -h "RACECHECK SUMMARY\|ERROR SUMMARY\|test result" $R/racecheck-splitk.log
pack
# 3. the whole random sweep
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 timeout $(t 240) bash $B/run.sh $R/random bench gemm --quick > $R/random.log 2>&1; el "random rc=$?"
grep -h "^SWEEP" $R/random.log | cut -c1-150
pack; ls -la $OUT
