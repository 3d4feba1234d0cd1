#!/usr/bin/env python3
"""ab131.py DIR: per op and cell, the median p50 of b131 (fused-new1.log, fused-new2.log) and of
b128 (fused-base1.log, fused-base2.log), their ratio (b128 / b131: > 1 means b131 is faster), the
geometry each took (STAMP), and torch eager and torch.compile from torch/mid.json (torch time /
b131 time)."""
import json, re, sys, collections, statistics, os
d = sys.argv[1]
pat = re.compile(r"^  (\S+) (\d+)x(\d+): p50 ([\d.]+) us")
stamp = re.compile(r"^STAMP kernel=(\S+) .*threads_per_row=(\d+)")
def load(names):
    acc = collections.defaultdict(list)
    for n in names:
        p = os.path.join(d, n)
        if not os.path.exists(p): continue
        for l in open(p):
            m = pat.match(l)
            if m: acc[(m.group(1), int(m.group(2)), int(m.group(3)))].append(float(m.group(4)))
    return {k: (statistics.median(v), len(v)) for k, v in acc.items()}
def geoms(names):
    out = {}
    for n in names:
        p = os.path.join(d, n)
        if not os.path.exists(p): continue
        last = None
        for l in open(p):
            s = re.search(r"block\((\d+),", l)
            if l.startswith("STAMP") and s: last = s.group(1)
            m = pat.match(l)
            if m and last: out[(m.group(1), int(m.group(2)), int(m.group(3)))] = last
    return out
new, base = load(["fused-new1.log", "fused-new2.log"]), load(["fused-base1.log", "fused-base2.log"])
gn, gb = geoms(["fused-new1.log"]), geoms(["fused-base1.log"])
torch = {}
tp = os.path.join(d, "torch/mid.json")
if os.path.exists(tp):
    for r in json.load(open(tp))["results"]:
        torch[(r["mode"], r["op"], r["rows"], r["cols"])] = r["median_us"]
print(f"{'op':24} {'cell':>10} {'b131 us':>8} {'b128 us':>8} {'b128/b131':>9} {'tpr':>9} {'eager':>7} {'compile':>7} {'x eager':>7} {'x compile':>9}")
ratios = []; changed = []; wins = collections.Counter(); cells = collections.Counter()
f = lambda v, n=2: "-" if v is None else f"{v:.{n}f}"
for k in sorted(new):
    n, _ = new[k]; b = base.get(k, (None,))[0]
    e = torch.get(("eager",) + k); c = torch.get(("compile",) + k)
    r = b / n if b else None
    if r: ratios.append(r)
    if gn.get(k) != gb.get(k) and r: changed.append(r)
    for mode, t in (("eager", e), ("compile", c)):
        if t: cells[mode] += 1; wins[mode] += t >= n
    print(f"{k[0]:24} {f'{k[1]}x{k[2]}':>10} {n:8.2f} {f(b):>8} {f(r, 3):>9} {gb.get(k, '-'):>4}>{gn.get(k, '-'):<4} {f(e):>7} {f(c):>7} {f(e / n if e else None, 3):>7} {f(c / n if c else None, 3):>9}")
print()
if ratios: print(f"b131 vs b128: {len(ratios)} cells, median {statistics.median(ratios):.3f}x, min {min(ratios):.3f}x, max {max(ratios):.3f}x")
if changed: print(f"cells whose threads per row changed: {len(changed)}, median {statistics.median(changed):.3f}x, min {min(changed):.3f}x, max {max(changed):.3f}x")
for mode in ("eager", "compile"): print(f"b131 faster than torch {mode}: {wins[mode]} of {cells[mode]} cells")
