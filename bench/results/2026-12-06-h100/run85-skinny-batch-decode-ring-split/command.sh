# run85: the skinny tiles' batched element loads; NN decode with long K on the ring walk split
# over K; the decode grid with every cell also on the forced ring walk. Bundles built here:
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b85    (this change)
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/base   (main, e0420bd)
# There, with .devcarry carried: bash .devcarry/run85.sh
set -u
R=/tmp/r85; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r85.tar.gz r85); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-580}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b85 base; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=.devcarry/b85; D=/tmp/b85; Z=.devcarry/base
# 1. every GEMM GPU test but the digest gate; then record, merge, gate in a second process
timeout $(t 200) $D/tests/gpu_gemm --include-ignored --test-threads=1 --show-output --skip digests_match_the_record --skip record_gemm_digests > $R/gpu_gemm.log 2>&1; el "gpu_gemm rc=$?"
grep -h "^test \|test result" $R/gpu_gemm.log | grep -v " ok$"; grep -h "panicked" -A2 $R/gpu_gemm.log | head -8 | cut -c1-300
grep -h "split=" $R/gpu_gemm.log | grep "n128w8" | head -2 | cut -c1-400
timeout $(t 60) $D/tests/gpu_gemm --ignored --exact record_gemm_digests --show-output > $R/gemm-record.log 2>&1; el "record rc=$?"
DIG=/work/main/tests/digests/gemm.txt; mkdir -p $(dirname $DIG); [ -f $DIG ] || cp tests/digests/gemm.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/gemm.txt $R/gemm-record.log $R/gemm-digests.txt > $R/digest-merge.log; tail -4 $R/digest-merge.log
cp $R/gemm-digests.txt $DIG
timeout $(t 60) $D/tests/gpu_gemm --include-ignored --exact digests_match_the_record --show-output > $R/gemm-gate.log 2>&1; el "digest gate rc=$? $(grep -h 'test result' $R/gemm-gate.log)"
pack
# 2. memcheck and racecheck on the decode walks (the split ring included); memcheck on the
#    element paths (the skinny tiles' batched loads)
for tool in memcheck racecheck; do
  timeout $(t 60) compute-sanitizer --tool $tool --error-exitcode 86 $D/tests/gpu_gemm --include-ignored --exact decode_shapes_take_the_decode_kernel > $R/$tool-decode.log 2>&1; el "$tool decode rc=$?"
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/$tool-decode.log
done
timeout $(t 60) compute-sanitizer --tool memcheck --error-exitcode 86 $D/tests/gpu_gemm --include-ignored --exact unaligned_operands_are_copied_or_read_by_element_and_match > $R/memcheck-unaligned.log 2>&1; el "memcheck unaligned rc=$?"
grep -h "ERROR SUMMARY\|test result" $R/memcheck-unaligned.log
pack
# 3. the decode grid's N = 4096 and 8192 rows, NN, each cell also on the forced ring walk
CUBINS_GEMM_DECODE_GRID=1 CUBINS_GEMM_DECODE_GRID_N=4096,8192 CUBINS_GEMM_TIERS=bf16 CUBINS_GEMM_LAYOUTS=nn CUBINS_GEMM_SWEEP=n128 timeout $(t 210) bash $A/run.sh $R/decode-nn bench gemm > $R/decode-nn.log 2>&1; el "decode grid rc=$?"
grep -h "^GRID" $R/decode-nn.log | cut -c1-110
pack
# 4. the random sweep's shapes below 0.80x (run83/84) on this change; #34 and #10 on main too
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=34,10,5,9,30,31 timeout $(t 170) bash $A/run.sh $R/random bench gemm --quick > $R/random.log 2>&1; el "random rc=$?"
grep -h "^SWEEP" $R/random.log | cut -c1-150
pack
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=34,10 timeout $(t 60) bash $Z/run.sh $R/random-base bench gemm --quick > $R/random-base.log 2>&1; el "random base rc=$?"
grep -h "^SWEEP" $R/random-base.log | cut -c1-150
pack; ls -la $OUT
