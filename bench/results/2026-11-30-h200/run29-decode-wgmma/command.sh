#!/usr/bin/env bash
# Build here: make -C bench/results/2026-11-30-h200/run29-decode-wgmma/src
# Then on the GPU machine, from the repository root:
bash bench/results/2026-11-30-h200/run29-decode-wgmma/src/run.sh "${1:-/tmp/r29}"
