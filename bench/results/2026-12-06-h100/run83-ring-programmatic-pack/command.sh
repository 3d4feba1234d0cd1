# run83: the ring walk with its launchers; the mma.sync kernels, operand pass and split-K reduce
# as programmatic dependents; operands off 16-byte chunks copied wherever the element path
# would read 256 KiB. gpu_gemm (parity, repeat, graph replay), the digests (recorded, merged,
# gated in a second process), memcheck and racecheck, then the random sweep.
# Bundle: CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run83a
# There, with .devcarry carried: bash .devcarry/run83.sh
set -u
R=/tmp/r83; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r83.tar.gz r83); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-575}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/run83a; cp $B/BUILD.txt $R/bundle-BUILD.txt; D=/tmp/b83; mkdir -p $D
xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "binaries verified"
# 1. every GEMM GPU test but the digest gate; then record, merge, gate in a second process
timeout $(t 200) $D/tests/gpu_gemm --include-ignored --test-threads=1 --show-output --skip digests_match_the_record --skip record_gemm_digests > $R/gpu_gemm.log 2>&1; el "gpu_gemm rc=$?"
grep -h "^test \|test result" $R/gpu_gemm.log | grep -v " ok$"; grep -h "panicked" -A2 $R/gpu_gemm.log | head -8 | cut -c1-300
grep -h "n128w8" $R/gpu_gemm.log | grep "^GEMM-STAMP\|^sm_" | head -2 | cut -c1-400
timeout $(t 60) $D/tests/gpu_gemm --ignored --exact record_gemm_digests --show-output > $R/gemm-record.log 2>&1; el "record rc=$?"
DIG=/work/main/tests/digests/gemm.txt; mkdir -p $(dirname $DIG); [ -f $DIG ] || cp tests/digests/gemm.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/gemm.txt $R/gemm-record.log $R/gemm-digests.txt > $R/digest-merge.log; cat $R/digest-merge.log | tail -8
cp $R/gemm-digests.txt $DIG
timeout $(t 60) $D/tests/gpu_gemm --include-ignored --exact digests_match_the_record --show-output > $R/gemm-gate.log 2>&1; el "digest gate rc=$? $(grep -h 'test result' $R/gemm-gate.log)"
pack
# 2. memcheck and racecheck: the decode walks (ring included), the split and packed paths
for tool in memcheck racecheck; do
  for tst in decode_shapes_take_the_decode_kernel unaligned_operands_are_copied_or_read_by_element_and_match split_k_matches_float64_and_repeats_bit_for_bit; do
    timeout $(t 70) compute-sanitizer --tool $tool --error-exitcode 86 $D/tests/gpu_gemm --include-ignored --exact $tst > $R/$tool-$tst.log 2>&1; el "$tool $tst rc=$?"
    grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/$tool-$tst.log
  done
done
pack
# 3. the decode grid's N = 28672 row, NN (the ring walk)
CUBINS_GEMM_DECODE_GRID=1 CUBINS_GEMM_DECODE_GRID_N=28672 CUBINS_GEMM_TIERS=bf16 CUBINS_GEMM_LAYOUTS=nn timeout $(t 80) bash $B/run.sh $R/decode-ring bench gemm > $R/decode-ring.log 2>&1; el "decode ring rc=$?"
grep -h "^GRID" $R/decode-ring.log | cut -c1-110
pack
# 4. the random sweep (48 shapes, seed 2026), as many as the time allows
CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 timeout $(t 600) bash $B/run.sh $R/random bench gemm --quick > $R/random.log 2>&1; el "random rc=$?"
grep -h "^SWEEP" $R/random.log | cut -c1-150
grep -h "^GEMM-STAMP" $R/random.log | sed 's/.*kernel=\([^ ]*\).* m=\([0-9]*\) n=\([0-9]*\) k=\([0-9]*\).*flags=\([0-9a-fx]*\).*/\1 \2x\3x\4 \5/' | head -50
grep -h "^  bf16" $R/random.log | cut -c1-130
pack; ls -la $OUT
