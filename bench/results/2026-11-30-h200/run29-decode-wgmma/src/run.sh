#!/bin/bash
# Decode-GEMM explorer run, from the repo root:  bench/results/2026-11-30-h200/run29-decode-wgmma/src/run.sh LOGDIR
# tails.txt: correctness + determinism on tail shapes; decode.txt: timing vs cuBLAS
# (N = K = 4096, 8192; M = 1, 2, 8, 16; bf16 + fp16; NT + NN); summary.txt: ratios per shape.
set -u
LOG=${1:?usage: run.sh LOGDIR}
mkdir -p "$LOG"
B=${EXPLORE:-bench/results/2026-11-30-h200/run29-decode-wgmma/src/explore}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv > "$LOG/smi.txt" 2>&1
timeout 60 $B tails all > "$LOG/tails.txt" 2>&1; echo "rc=$?" >> "$LOG/tails.txt"
timeout 150 $B decode all ${2:-} > "$LOG/decode.txt" 2>&1; echo "rc=$?" >> "$LOG/decode.txt"
{
  echo "== tails: bad lines"; grep -E "WRONG|NONDET|CUDA|rc=" "$LOG/tails.txt"
  echo "== decode: ratio = cuBLAS time / variant time (med us in parentheses)"
  awk '/^RESULT/ { key=$2" "$3" "$4$5$6; v=$7; for (i=6;i<=NF;i++) { if ($i == "med_us=") mu=$(i+1); else if ($i ~ /^med_us=/) mu=substr($i,8); if ($i ~ /^ratio=/) r=substr($i,7) }
       bad=($0 ~ /WRONG|NONDET/) ? "!" : ""; if (key != last) { if (last != "") print line; line=key; last=key }
       line=line"  "v"="r"("mu")"bad } END { print line }' "$LOG/decode.txt"
  grep -E "CUDA|rc=|DONE" "$LOG/decode.txt"
} > "$LOG/summary.txt"
cat "$LOG/summary.txt"
