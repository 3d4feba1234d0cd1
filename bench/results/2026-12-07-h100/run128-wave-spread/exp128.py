#!/usr/bin/env python3
"""exp128.py DIR: step 8 of run128.sh. Per op and cell, the median p50 of b128 (exp-a*),
b129 (exp-b*) and b130 (exp-c*) over their alternating rounds, the ratios b128/b129 and
b128/b130 (> 1: the experiment is faster), the fixed-threads readings of the sweeps (exp-sweep-a:
b128, exp-sweep-c: b130) at 32 and 64 threads a row, and torch.compile from torch/mid.json."""
import collections, json, os, re, statistics, sys
d = sys.argv[1]
pat = re.compile(r"^  (\S+) (\d+)x(\d+)(?: threads=(\d+))?: p50 ([\d.]+) us")
def load(prefix):
    acc = collections.defaultdict(list)
    for n in sorted(os.listdir(d)):
        if not (n.startswith(prefix) and n.endswith(".log")): continue
        for l in open(os.path.join(d, n)):
            m = pat.match(l)
            if m: acc[(m.group(1), int(m.group(2)), int(m.group(3)), m.group(4) or "auto")].append(float(m.group(5)))
    return {k: statistics.median(v) for k, v in acc.items()}
a, b, c = load("fused-exp-a"), load("fused-exp-b"), load("fused-exp-c")
sa, sc = load("fused-exp-sweep-a"), load("fused-exp-sweep-c")
torch = {}
tp = os.path.join(d, "torch/mid.json")
if os.path.exists(tp):
    for r in json.load(open(tp))["results"]:
        torch[(r["mode"], r["op"], r["rows"], r["cols"])] = r["median_us"]
f = lambda v: "     -" if v is None else f"{v:6.2f}"
q = lambda x, y: "    -" if (x is None or y is None) else f"{x / y:5.3f}"
print(f"{'op':14} {'cell':>10} | {'b128':>6} {'b129':>6} {'b130':>6} | a/b   a/c   | a@32   c@32   a@64   c@64 | compile | compile/best")
for k in sorted(k for k in a if k[3] == "auto"):
    op, r, cc, _ = k
    va, vb, vc = a.get(k), b.get(k), c.get(k)
    t = [sa.get((op, r, cc, "32")), sc.get((op, r, cc, "32")), sa.get((op, r, cc, "64")), sc.get((op, r, cc, "64"))]
    comp = torch.get(("compile", op, r, cc))
    best = min(v for v in [va, vb, vc] + t if v is not None)
    print(f"{op:14} {f'{r}x{cc}':>10} | {f(va)} {f(vb)} {f(vc)} | {q(va, vb)} {q(va, vc)} | " + " ".join(f(v) for v in t) + f" | {f(comp)} | {q(comp, best)}")
