# run98: the gates on the landing state (bundle b97: main's kernels, no operand pass below
# K = 65; CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b97). There, with
# .devcarry carried: bash .devcarry/run98.sh
set -u
R=/tmp/r98; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r98.tar.gz r98); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-300}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/b97; D=/tmp/b97; mkdir -p $D; cp $B/BUILD.txt $R/bundle-b97-BUILD.txt
xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle b97 verified"
timeout $(t 150) $D/tests/gpu_gemm --include-ignored --test-threads=1 --show-output --skip digests_match_the_record --skip record_gemm_digests > $R/gpu_gemm.log 2>&1; el "gpu_gemm rc=$?"
grep -h "^test \|test result" $R/gpu_gemm.log | grep -v " ok$"; grep -h "panicked" -A2 $R/gpu_gemm.log | head -8 | cut -c1-300
timeout $(t 30) $D/tests/gpu_gemm --ignored --exact record_gemm_digests --show-output > $R/gemm-record.log 2>&1; el "record rc=$?"
DIG=/work/main/tests/digests/gemm.txt; mkdir -p $(dirname $DIG); [ -f $DIG ] || cp tests/digests/gemm.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/gemm.txt $R/gemm-record.log $R/gemm-digests.txt > $R/digest-merge.log; tail -4 $R/digest-merge.log
cp $R/gemm-digests.txt $DIG
timeout $(t 30) $D/tests/gpu_gemm --include-ignored --exact digests_match_the_record --show-output > $R/gemm-gate.log 2>&1; el "digest gate rc=$? $(grep -h 'test result' $R/gemm-gate.log)"
pack
timeout $(t 50) compute-sanitizer --tool memcheck --error-exitcode 86 $D/tests/gpu_gemm --include-ignored --exact unaligned_operands_are_copied_or_read_by_element_and_match > $R/memcheck-unaligned.log 2>&1; el "memcheck unaligned rc=$?"
grep -h "ERROR SUMMARY\|test result" $R/memcheck-unaligned.log
pack; ls -la $OUT
