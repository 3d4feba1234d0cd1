# run82: the decode ring walk's first GPU run (gpu_gemm: parity with N and K tails, repeat and
# graph replay, its digests recorded then gated; memcheck and racecheck) and the H200 decode
# grid (bf16, NN then NT). Bundle: CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run82a
# There, with .devcarry carried: bash .devcarry/run82.sh
set -u
R=/tmp/r82; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r82.tar.gz r82); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-570}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/run82a; cp $B/BUILD.txt $R/bundle-BUILD.txt; D=/tmp/b82; mkdir -p $D
xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "binaries verified"
# 1. every GEMM GPU test but the digest gate; then record, merge, gate in a second process
timeout $(t 200) $D/tests/gpu_gemm --include-ignored --test-threads=1 --show-output --skip digests_match_the_record --skip record_gemm_digests > $R/gpu_gemm.log 2>&1; el "gpu_gemm rc=$?"
grep -h "^test \|test result" $R/gpu_gemm.log | grep -v " ok$"; grep -h "n128w8" $R/gpu_gemm.log | cut -c1-300 | head -3
timeout $(t 60) $D/tests/gpu_gemm --ignored --exact record_gemm_digests --show-output > $R/gemm-record.log 2>&1; el "record rc=$?"
DIG=/work/main/tests/digests/gemm.txt; mkdir -p $(dirname $DIG); [ -f $DIG ] || cp tests/digests/gemm.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/gemm.txt $R/gemm-record.log $R/gemm-digests.txt > $R/digest-merge.log; tail -2 $R/digest-merge.log
cp $R/gemm-digests.txt $DIG
timeout $(t 60) $D/tests/gpu_gemm --include-ignored --exact digests_match_the_record --show-output > $R/gemm-gate.log 2>&1; el "digest gate rc=$? $(grep -h 'test result' $R/gemm-gate.log)"
pack
# 2. memcheck and racecheck on the ring walk (and the direct walks) at tails
for tool in memcheck racecheck; do
  timeout $(t 90) compute-sanitizer --tool $tool --error-exitcode 86 $D/tests/gpu_gemm --include-ignored --exact decode_shapes_take_the_decode_kernel > $R/$tool-decode.log 2>&1; el "$tool rc=$?"
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/$tool-decode.log
done
pack
# 3. the decode grid on the H200, bf16: NN (the ring at N = 28672) then NT
for lay in nn nt; do
  CUBINS_GEMM_DECODE_GRID=1 CUBINS_GEMM_TIERS=bf16 CUBINS_GEMM_LAYOUTS=$lay timeout $(t 190) bash $B/run.sh $R/decode-$lay bench gemm > $R/decode-$lay.log 2>&1; el "decode $lay rc=$?"
  grep -h "^GRID" $R/decode-$lay.log | cut -c1-110 | column -t
  pack
done
grep -hc "^CHECK FAIL" $R/*.log; ls -la $OUT
