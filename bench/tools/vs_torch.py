#!/usr/bin/env python3
"""vs_torch.py DIR: per op and shape of the fused bench, the crate's p50 (DIR/fused-new.log, and
DIR/fused-base.log where a baseline ran; a key read twice keeps its last reading), torch eager
and torch.compile p50 (DIR/torch_grid.json, from benches/torch_fused.py --grid) and the ratios
(torch time / crate time: > 1 means the crate is faster)."""
import json, re, sys, collections, statistics

run = sys.argv[1]
pat = re.compile(r"^  (\S+) (\d+)x(\d+): p50 ([\d.]+) us, p95 ([\d.]+)")
def crate(path):
    out = {}
    try:
        for l in open(path):
            m = pat.match(l)
            if m:
                out[(m.group(1), int(m.group(2)), int(m.group(3)))] = (float(m.group(4)), float(m.group(5)))
    except FileNotFoundError:
        pass
    return out
new, base = crate(f"{run}/fused-new.log"), crate(f"{run}/fused-base.log")
torch = {}
for r in json.load(open(f"{run}/torch_grid.json"))["results"]:
    torch[(r["mode"], r["op"], r["rows"], r["cols"])] = r["median_us"]
rows_out = []
wins = collections.Counter(); cells = collections.Counter(); worst = {}
print(f"{'op':24} {'shape':>9} {'new us':>8} {'base us':>8} {'new/base':>8} {'eager':>7} {'compile':>7} {'x eager':>8} {'x compile':>9}")
for (op, r, c), (p50, p95) in sorted(new.items()):
    b = base.get((op, r, c), (None,))[0]
    e = torch.get(("eager", op, r, c)); k = torch.get(("compile", op, r, c))
    xe = e / p50 if e else None; xk = k / p50 if k else None
    for mode, x in (("eager", xe), ("compile", xk)):
        if x is not None:
            cells[mode] += 1; wins[mode] += x >= 1.0
            w = worst.get((mode, op))
            if w is None or x < w[0]: worst[(mode, op)] = (x, f"{r}x{c}")
    f = lambda v, n=2: "-" if v is None else f"{v:.{n}f}"
    print(f"{op:24} {f'{r}x{c}':>9} {p50:8.2f} {f(b):>8} {f(b / p50 if b else None, 3):>8} {f(e):>7} {f(k):>7} {f(xe, 3):>8} {f(xk, 3):>9}")
print()
for mode in ("eager", "compile"):
    print(f"faster than torch {mode}: {wins[mode]} of {cells[mode]} cells")
for (mode, op), (x, s) in sorted(worst.items()):
    print(f"worst vs {mode:7} {op:24} {x:.3f}x at {s}")
sp = [b / new[k][0] for k, (b, _) in base.items() if k in new]
if sp:
    print(f"new vs baseline (same call, separate processes): {len(sp)} cells, median {statistics.median(sp):.2f}x faster, min {min(sp):.2f}x, max {max(sp):.2f}x")
