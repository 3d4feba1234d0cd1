#!/usr/bin/env bash
# Times this crate's kernels against another build of it, in one process and one window:
# the baseline bundle dumps its embedded artifacts, and the candidate bundle's bench loads
# them as the comparator arm of paired ABBA windows.
#
#   benches/compare-builds.sh BASELINE_BUNDLE CANDIDATE_BUNDLE RESULTS_DIR [BENCH [ARGS...]]
#
# BENCH defaults to copy_ceiling (the bench that supports --baseline-artifacts today).
# Bundles come from `cargo xtask gpu-bundle --out DIR` at the two commits.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
baseline="$1" candidate="$2" results="$3"
shift 3
bench="${1:-copy_ceiling}"
[ $# -ge 1 ] && shift
artifacts="$results/baseline-artifacts"
mkdir -p "$results"
# Bundles carry their binaries packed (payload.tar.xz): unpack the baseline's, checked.
unpacked="$(mktemp -d "${TMPDIR:-/tmp}/cubins-baseline.XXXXXX")"
trap 'rm -rf "$unpacked"' EXIT
(cd "$baseline" && sha256sum --quiet -c SHA256SUMS)
xz -dc "$baseline/payload.tar.xz" | tar -xf - -C "$unpacked"
(cd "$unpacked" && sha256sum --quiet -c "$baseline/BINARIES.sha256")
"$unpacked/benches/$bench" --dump-artifacts "$artifacts"
cp "$baseline/BUILD.txt" "$artifacts/BUILD.txt" 2>/dev/null || true
bash "$candidate/run.sh" "$results" bench "$bench" --baseline-artifacts "$artifacts" "$@"
