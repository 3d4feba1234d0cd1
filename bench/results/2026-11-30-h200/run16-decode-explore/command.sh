#!/usr/bin/env bash
# Build here: make -C bench/results/2026-11-30-h200/run16-decode-explore/src
# Then on the GPU machine, from the repository root, once per run (logs/rN):
bash bench/results/2026-11-30-h200/run16-decode-explore/src/run.sh "${1:-/tmp/decode}"
