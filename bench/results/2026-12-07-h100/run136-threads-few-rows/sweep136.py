#!/usr/bin/env python3
"""sweep136.py DIR: per op and cell, the automatic choice's p50 (and its block) and the p50 at
each fixed threads per row (CUBINS_FUSED_SWEEP=1), from DIR/fused-sweep-{a,b,c}.log; the best
and automatic / best."""
import collections, re, sys
d = sys.argv[1]
pat = re.compile(r"^  (\S+) (\d+)x(\d+)(?: threads=(\d+))?: p50 ([\d.]+) us")
v, geo = collections.defaultdict(dict), {}
for f in ("fused-sweep-a.log", "fused-sweep-b.log", "fused-sweep-c.log"):
    last = None
    for l in open(f"{d}/{f}"):
        s = re.search(r"block\((\d+),(\d+),", l)
        if l.startswith("STAMP") and s: last = f"{s.group(1)}x{s.group(2)}"
        m = pat.match(l)
        if m:
            k = (m.group(1), int(m.group(2)), int(m.group(3)))
            t = m.group(4) or "auto"
            v[k][t] = float(m.group(5))
            if t == "auto": geo[k] = last
ts = ["auto", "32", "64", "128", "256", "512", "1024"]
print(f"{'op':24} {'cell':>9} {'block':>7} " + " ".join(f"{t:>6}" for t in ts) + "  best auto/best")
for k in sorted(v):
    r = v[k]; best = min((x, t) for t, x in r.items())
    print(f"{k[0]:24} {f'{k[1]}x{k[2]}':>9} {geo.get(k, '-'):>7} " + " ".join(f"{r[t]:6.2f}" if t in r else f"{'-':>6}" for t in ts) + f"  {best[1]:>5} {r['auto'] / best[0]:.3f}")
