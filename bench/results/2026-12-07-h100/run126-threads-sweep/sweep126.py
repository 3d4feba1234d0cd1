#!/usr/bin/env python3
"""sweep126.py DIR: per op and cell, each bundle's automatic p50 and its fixed threads-per-row
p50s (median over the rounds found: fused-sweep1.log, fused-sweep2.log for b126;
fused-sweep1-mid.log, fused-sweep2-mid.log for b127), the fastest choice, and torch.compile
and eager from torch/mid.json (ratio = torch time / crate time)."""
import json, re, sys, collections, statistics, os
d = sys.argv[1]
pat = re.compile(r"^  (\S+) (\d+)x(\d+)(?: threads=(\d+))?: p50 ([\d.]+) us")
def load(names):
    acc = collections.defaultdict(list)
    for n in names:
        p = os.path.join(d, n)
        if not os.path.exists(p): continue
        for l in open(p):
            m = pat.match(l)
            if m:
                acc[(m.group(1), int(m.group(2)), int(m.group(3)), m.group(4) or "auto")].append(float(m.group(5)))
    return {k: statistics.median(v) for k, v in acc.items()}
base = load(["fused-sweep1.log", "fused-sweep2.log"])
mid = load(["fused-sweep1-mid.log", "fused-sweep2-mid.log"])
torch = {}
tp = os.path.join(d, "torch/mid.json")
if os.path.exists(tp):
    for r in json.load(open(tp))["results"]:
        torch[(r["mode"], r["op"], r["rows"], r["cols"])] = r["median_us"]
cells = sorted({k[:3] for k in base} | {k[:3] for k in mid})
T = ["auto", "32", "64", "128", "256", "512", "1024"]
print(f"{'op':22} {'cell':>10} | " + " ".join(f"{t:>6}" for t in T) + " | best   | b127: " + " ".join(f"{t:>6}" for t in T) + " | compile eager | auto/compile mid/compile best/compile")
for c in cells:
    b = [base.get(c + (t,)) for t in T]; m = [mid.get(c + (t,)) for t in T]
    f = lambda v: "     -" if v is None else f"{v:6.2f}"
    allc = [(v, "b126:" + t) for v, t in zip(b, T) if v] + [(v, "b127:" + t) for v, t in zip(m, T) if v]
    best = min(allc) if allc else (None, "-")
    k = torch.get(("compile",) + c); e = torch.get(("eager",) + c)
    r = lambda x: "   -" if (x is None or k is None) else f"{k / x:5.3f}"
    print(f"{c[0]:22} {f'{c[1]}x{c[2]}':>10} | " + " ".join(f(v) for v in b) + f" | {best[1]:>10} | " + " ".join(f(v) for v in m)
          + f" | {f(k)} {f(e)} | {r(b[0])} {r(m[0])} {r(best[0])}")
