# Helpers the device runs' scripts source (bash): `R=/tmp/rNNN NAME=rNNN; source bench/tools/device.sh`.
# The results folder R is packed into $OUT/NAME.tar.gz after each step, so a call cut off by its
# limit still returns what ran; LIMIT (seconds, default 560) bounds the whole script.
mkdir -p "$R"
LIMIT=${LIMIT:-560}
T0=$(date +%s)
# R as $OUT/NAME.tar.gz.
pack() { (cd "$(dirname "$R")" && tar czf "$OUT/$NAME.tar.gz" "$(basename "$R")"); }
# The message with the seconds since the script started.
el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
# A step's timeout: its own seconds, or what is left of LIMIT if less (at least 3).
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
# Each bundle .devcarry/B extracted into /tmp/B and checked against its BINARIES.sha256; its
# BUILD.txt kept as R/bundle-B-BUILD.txt.
unpack() {
  local b
  for b in "$@"; do
    mkdir -p /tmp/$b; cp .devcarry/$b/BUILD.txt $R/bundle-$b-BUILD.txt
    [ -e /tmp/$b/.unpacked ] || { xz -dc .devcarry/$b/payload.tar.xz | tar -xf - -C /tmp/$b && touch /tmp/$b/.unpacked; }
    (cd /tmp/$b && sha256sum --quiet -c "$OLDPWD/.devcarry/$b/BINARIES.sha256") && echo "bundle $b verified" || echo "bundle $b: CHECKSUM MISMATCH"
  done
}
# The GPU, driver, clocks and temperature, into R/nvidia-smi-<tag>.csv and on stdout.
gpu_info() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvidia-smi${1:+-$1}.csv
  cat $R/nvidia-smi${1:+-$1}.csv
}
# The GPU tests of test binary T in bundle dir A (`gpu_tests A T [ARGS...]`: every test with
# --include-ignored, ARGS such as `--skip NAME` or `--exact NAME`) into R/tests/T.log, the
# result and any failure shown; STEP (seconds, default 200) bounds it.
gpu_tests() {
  local a=$1 tb=$2; shift 2
  timeout $(t ${STEP:-200}) $a/tests/$tb --include-ignored --test-threads=1 --show-output "$@" > $R/tests/$tb.log 2>&1
  el "$tb rc=$? $(grep -h 'test result' $R/tests/$tb.log | tail -1)"
  grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/$tb.log | head -20 | cut -c1-300
}
# memcheck and racecheck over tests NAMES of test binary T in bundle dir A (`sanitize A T
# NAMES...`), into R/memcheck.log and R/racecheck.log; each bounded by STEP (default 90).
sanitize() {
  local a=$1 tb=$2 tool; shift 2
  for tool in memcheck racecheck; do
    timeout $(t ${STEP:-90}) compute-sanitizer --tool $tool --error-exitcode 86 $a/tests/$tb --include-ignored --test-threads=1 "$@" > $R/$tool.log 2>&1
    el "$tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|test result' $R/$tool.log | tr '\n' ' ')"
  done
}
# A candidate's digest record (`digest_gate A T REC`, after `gpu_tests A T --skip
# digests_match_the_record`): the HASH lines of R/tests/T.log merged into tests/digests/REC.txt
# as R/REC-digests.txt (what changed and was added: R/digest-merge.log), installed where the
# bundle's gate reads it first (DIG, default /work/main/tests/digests/REC.txt), and the gate
# run in a second process.
digest_gate() {
  local a=$1 tb=$2 rec=$3 dig=${DIG:-/work/main/tests/digests/$3.txt}
  cp tests/digests/$rec.txt $R/$rec-digests-main.txt
  python3 bench/tools/merge_digests.py $R/$rec-digests-main.txt $R/tests/$tb.log $R/$rec-digests.txt > $R/digest-merge.log
  tail -12 $R/digest-merge.log
  mkdir -p "$(dirname $dig)"; cp $R/$rec-digests.txt $dig
  timeout $(t 60) $a/tests/$tb --include-ignored --exact digests_match_the_record --show-output > $R/tests/$tb-gate.log 2>&1
  el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/$tb-gate.log)"
}
