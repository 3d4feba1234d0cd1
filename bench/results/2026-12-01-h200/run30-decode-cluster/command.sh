#!/usr/bin/env bash
# Build here: make -C bench/results/2026-12-01-h200/run30-decode-cluster/src
# Then on the GPU machine, from the repository root (run16's runner, this folder's binary):
EXPLORE=bench/results/2026-12-01-h200/run30-decode-cluster/src/explore \
  bash bench/results/2026-11-30-h200/run16-decode-explore/src/run.sh "${1:-/tmp/run30}" "${2:-}"
