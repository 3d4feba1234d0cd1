#!/usr/bin/env python3
"""abx.py DIR BASE ARM...: per op and cell, the median p50 of each arm (DIR/fused-<arm>1.log and
fused-<arm>2.log, the rounds of that arm) and the ratio BASE / arm (> 1: the arm is faster), with
the threads per row each arm's STAMP took; then each arm's distribution over the cells and over
the cells whose geometry changed."""
import collections, os, re, statistics, sys
d, base, arms = sys.argv[1], sys.argv[2], sys.argv[3:]
pat = re.compile(r"^  (\S+) (\d+)x(\d+): p50 ([\d.]+) us")
def load(arm):
    acc, geo = collections.defaultdict(list), {}
    for n in (f"fused-{arm}1.log", f"fused-{arm}2.log"):
        p = os.path.join(d, n)
        if not os.path.exists(p): continue
        last = None
        for l in open(p):
            s = re.search(r"block\((\d+),(\d+),", l)
            if l.startswith("STAMP") and s: last = f"{s.group(1)}x{s.group(2)}"
            m = pat.match(l)
            if m:
                k = (m.group(1), int(m.group(2)), int(m.group(3)))
                acc[k].append(float(m.group(4))); geo[k] = last
    return {k: statistics.median(v) for k, v in acc.items()}, geo
data = {a: load(a) for a in [base] + arms}
b, bg = data[base]
print(f"{'op':24} {'cell':>10} {base:>10} " + " ".join(f"{a:>10} {'x':>6} {'block':>7}" for a in arms) + f" {'base block':>10}")
for k in sorted(b):
    row = f"{k[0]:24} {f'{k[1]}x{k[2]}':>10} {b[k]:10.2f} "
    for a in arms:
        t, g = data[a][0].get(k), data[a][1].get(k)
        row += f"{t:10.2f} {b[k] / t:6.3f} {g or '-':>7} " if t else f"{'-':>10} {'-':>6} {'-':>7} "
    print(row + f"{bg.get(k) or '-':>10}")
print()
for a in arms:
    t, g = data[a]
    r = [b[k] / t[k] for k in b if k in t]
    ch = [b[k] / t[k] for k in b if k in t and g.get(k) != bg.get(k)]
    if r: print(f"{a}: {len(r)} cells, median {statistics.median(r):.3f}x, min {min(r):.3f}x, max {max(r):.3f}x")
    if ch: print(f"{a}: {len(ch)} cells whose block changed, median {statistics.median(ch):.3f}x, min {min(ch):.3f}x, max {max(ch):.3f}x")
