#!/usr/bin/env bash
# Build here: make -C bench/results/2026-11-30-h200/run17-tf32-wgmma-explore/src
# Then on the GPU machine, from the repository root (logs/call6/r is the last run):
bash bench/results/2026-11-30-h200/run17-tf32-wgmma-explore/src/run.sh "${1:-/tmp/tf32}"
