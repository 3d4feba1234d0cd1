# run104: the gates on the landing state (bundle b104: the twins taken from 10240 bf16 columns):
# every fused GPU test, the digest gate in a second process, memcheck over the twins' test.
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b104   (647243c)
# There, with .devcarry carried: bash .devcarry/run104.sh
set -u
R=/tmp/r104; mkdir -p $R/tests
pack() { (cd /tmp && tar czf $OUT/r104.tar.gz r104); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-150}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/b104; A=/tmp/b104; mkdir -p $A; cp $B/BUILD.txt $R/bundle-b104-BUILD.txt
xz -dc $B/payload.tar.xz | tar -xf - -C $A && (cd $A && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle b104 verified"
timeout $(t 60) $A/tests/gpu_fused --include-ignored --test-threads=1 --show-output --skip record_fused_digests > $R/tests/gpu_fused.log 2>&1
el "gpu_fused (digest gate included) rc=$? $(grep -h 'test result' $R/tests/gpu_fused.log | tail -1)"
grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/gpu_fused.log | head -20 | cut -c1-400
grep -h "walk=cluster" $R/tests/gpu_fused.log | head -2 | cut -c1-300
timeout $(t 40) compute-sanitizer --tool memcheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact forward_norms_split_few_long_rows_over_clusters > $R/memcheck.log 2>&1
el "memcheck rc=$? $(grep -h 'ERROR SUMMARY\|test result' $R/memcheck.log | tr '\n' ' ')"
pack; ls -la $OUT
