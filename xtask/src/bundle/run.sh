#!/usr/bin/env bash
# Runs this GPU bundle on a machine with an NVIDIA driver (no Rust needed).
#
#   run.sh RESULTS_DIR [tests|bench NAME [ARGS...]|benches|all|sanitize]
#
#   tests      every GPU test binary, --include-ignored --test-threads=1 (the default is all)
#   bench      one benchmark, with --results RESULTS_DIR/bench and any further ARGS
#   benches    every benchmark, then the run_bench tables
#   all        tests, then benches
#   sanitize   the GPU tests under compute-sanitizer --tool memcheck and --tool racecheck
#
# Prints PASS/FAIL per test and a summary line `N passed, M failed`; writes logs and a
# SHA256SUMS manifest into RESULTS_DIR; exits non-zero on any failure.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage() {
  sed -n '4,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
}
[ $# -ge 1 ] || usage
case "$1" in -h | --help) usage ;; esac
results="$1"
shift
mode="${1:-all}"
[ $# -ge 1 ] && shift
mkdir -p "$results" || exit 2
results="$(cd "$results" && pwd)"
summary="$results/summary.txt"
: >"$summary"
say() { echo "$@" | tee -a "$summary"; }

export CUBINS_RESULTS_DIR="$results"
if [ -n "${CUBINS_FORCE_ROUTE:-}" ]; then
  say "note: CUBINS_FORCE_ROUTE=$CUBINS_FORCE_ROUTE unset for this run (tests choose their routes)"
  unset CUBINS_FORCE_ROUTE
fi

passed=0
failed=0
failures=()
skip_bins="" # a regex of test binaries run_tests leaves out, said aloud

record() { # STATUS NAME
  say "$1 $2"
  if [ "$1" = PASS ]; then passed=$((passed + 1)); else
    failed=$((failed + 1))
    failures+=("$2")
  fi
}

# run_tests LOG_DIR [WRAPPER...]: every test binary, one PASS/FAIL line per test.
run_tests() {
  local dir="$1"
  shift
  mkdir -p "$dir"
  local exe name log rc ran line test status
  for exe in "$bin"/tests/*; do
    [ -x "$exe" ] || continue
    name="$(basename "$exe")"
    if [ -n "$skip_bins" ] && [[ "$name" =~ $skip_bins ]]; then
      say "SKIP $name (not meaningful here: $skip_why)"
      continue
    fi
    log="$dir/$name.log"
    "$@" "$exe" --include-ignored --test-threads=1 --show-output >"$log" 2>&1
    rc=$?
    ran=0
    while IFS= read -r line; do
      test="${line#test }"
      status="${test##* ... }"
      test="${test% ... *}"
      ran=$((ran + 1))
      case "$status" in
        ok) record PASS "$name::$test" ;;
        *)
          record FAIL "$name::$test ($status)"
          # The panic message: the line after "thread '<test>' ... panicked at".
          grep -A1 -F "thread '$test'" "$log" | grep -v -e "^thread '" -e '^--$' | head -n 1 | cut -c1-400 |
            sed 's/^/      /' | tee -a "$summary"
          ;;
      esac
    done < <(grep -E '^test .+ \.\.\. ' "$log")
    if [ "$ran" -eq 0 ]; then
      record FAIL "$name (exit $rc, no test reported; see $log)"
    elif [ "$rc" -ne 0 ] && ! grep -q '^test result: FAILED' "$log"; then
      record FAIL "$name (exit $rc after the tests reported; see $log)"
    fi
    grep -hE '^(STAMP|MEASURE|OCCUPANCY) ' "$log" >>"$dir/stamps.txt"
    grep -hE 'ERROR SUMMARY' "$log" | sed "s/^/$name: /" | tee -a "$summary"
  done
  [ -f "$dir/stamps.txt" ] && cat "$dir/stamps.txt"
}

run_bench() { # NAME [ARGS...]
  local name="$1"
  shift
  local exe="$bin/benches/$name"
  if [ ! -x "$exe" ]; then
    record FAIL "bench $name (no such benchmark; have: $(ls "$bin/benches" | tr '\n' ' '))"
    return
  fi
  mkdir -p "$results/bench"
  "$exe" --results "$results/bench" "$@" 2>&1 | tee "$results/bench/$name.log"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ]; then record PASS "bench $name"; else record FAIL "bench $name (exit $rc)"; fi
}

run_benches() {
  local exe name
  for exe in "$bin"/benches/*; do
    name="$(basename "$exe")"
    [ "$name" = run_bench ] && continue
    run_bench "$name"
  done
  [ -x "$bin/benches/run_bench" ] && run_bench run_bench
}

run_sanitizer() {
  if ! command -v compute-sanitizer >/dev/null; then
    record FAIL "sanitize (compute-sanitizer not on PATH)"
    return
  fi
  local tool
  skip_bins='^(no_device|gpu_measure)$'
  skip_why="timings mean nothing under a sanitizer, and the no-device test hides the GPU"
  for tool in memcheck racecheck; do
    say "== compute-sanitizer --tool $tool"
    export CUBINS_SANITIZER="$tool"
    run_tests "$results/sanitize-$tool" compute-sanitizer --tool "$tool" --error-exitcode 86 --print-limit 100
  done
  unset CUBINS_SANITIZER
  skip_bins=""
}

# The binaries travel packed (payload.tar.xz); check, unpack into a temporary folder, check again.
bin="$(mktemp -d "${TMPDIR:-/tmp}/cubins-bundle.XXXXXX")" || exit 2
trap 'rm -rf "$bin"' EXIT
if ! (cd "$here" && sha256sum --quiet -c SHA256SUMS); then
  echo "the bundle does not match its SHA256SUMS: copy it again" >&2
  exit 2
fi
if ! xz -dc "$here/payload.tar.xz" | tar -xf - -C "$bin" || ! (cd "$bin" && sha256sum --quiet -c "$here/BINARIES.sha256"); then
  echo "unpacking $here/payload.tar.xz into $bin failed (needs tar and xz)" >&2
  exit 2
fi
cp "$here/BINARIES.sha256" "$results/bundle-BINARIES.sha256"

{
  echo "bundle: $(head -n 1 "$here/BUILD.txt" 2>/dev/null)"
  echo "host: $(uname -n) $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} | tee -a "$summary"
cp "$here/BUILD.txt" "$results/bundle-BUILD.txt" 2>/dev/null
command -v nvidia-smi >/dev/null && nvidia-smi >"$results/nvidia-smi.txt" 2>&1

case "$mode" in
  tests) run_tests "$results/tests" ;;
  bench)
    [ $# -ge 1 ] || usage
    run_bench "$@"
    ;;
  benches) run_benches ;;
  all)
    run_tests "$results/tests"
    run_benches
    ;;
  sanitize) run_sanitizer ;;
  *) usage ;;
esac

say "$passed passed, $failed failed"
for f in "${failures[@]}"; do say "  failed: $f"; done
(cd "$results" && find . -type f ! -name SHA256SUMS -print0 | sort -z | xargs -0 sha256sum >SHA256SUMS)
echo "results: $results (SHA256SUMS written)"
[ "$failed" -eq 0 ]
