#!/usr/bin/env python3
"""torch_compare.py DIR: torch eager and torch.compile (graph replay) with each call's outputs
dropped at once (DIR/torch/main.json, the bench as on main) and rotated (DIR/torch/rotated.json),
against b133's p50 (median of DIR/fused-new1.log and fused-new2.log); ratios torch / b133."""
import collections, json, re, statistics, sys
d = sys.argv[1]
def load(p):
    return {(r["mode"], r["op"], r["rows"], r["cols"]): r["median_us"] for r in json.load(open(p))["results"]}
a, b = load(f"{d}/torch/rotated.json"), load(f"{d}/torch/main.json")
pat = re.compile(r"^  (\S+) (\d+)x(\d+): p50 ([\d.]+) us")
ours = collections.defaultdict(list)
for f in ("fused-new1.log", "fused-new2.log"):
    for l in open(f"{d}/{f}"):
        m = pat.match(l)
        if m: ours[(m.group(1), int(m.group(2)), int(m.group(3)))].append(float(m.group(4)))
o = {k: statistics.median(v) for k, v in ours.items()}
print(f"{'mode':8} {'op':24} {'cell':>10} {'dropped':>8} {'rotated':>8} {'rot/drop':>8} {'b133':>7} {'x rot':>6} {'x drop':>6}")
for k in sorted(a):
    n = o[k[1:]]
    print(f"{k[0]:8} {k[1]:24} {f'{k[2]}x{k[3]}':>10} {b[k]:8.2f} {a[k]:8.2f} {a[k] / b[k]:8.3f} {n:7.2f} {a[k] / n:6.3f} {b[k] / n:6.3f}")
for mode in ("compile", "eager"):
    xr = [a[k] / o[k[1:]] for k in a if k[0] == mode]
    xd = [b[k] / o[k[1:]] for k in b if k[0] == mode]
    print(f"{mode}: rotated min {min(xr):.3f}x median {statistics.median(xr):.3f}x ({sum(x >= 1 for x in xr)} of {len(xr)} >= 1); "
          f"dropped min {min(xd):.3f}x median {statistics.median(xd):.3f}x ({sum(x >= 1 for x in xd)} of {len(xd)} >= 1)")
