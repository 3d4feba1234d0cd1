#!/usr/bin/env python3
"""ncu135.py DIR: per cell, each profiled kernel of the crate and of torch.compile (the first of
each name): grid x block, registers, duration, executed instructions."""
import glob, os, re, sys
d = sys.argv[1]
for f in sorted(glob.glob(f"{d}/ncu-*.log")):
    side = "crate" if f.endswith("-crate.log") else "compile"
    cell = os.path.basename(f)[4:].rsplit("-", 1)[0]
    seen, cur = set(), None
    for l in open(f, errors="replace"):
        m = re.match(r"^  (\w+) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\)", l)
        if m:
            cur = None if m.group(1) in seen else {"name": m.group(1), "grid": m.group(2), "block": m.group(5)}
            if cur: seen.add(m.group(1))
            continue
        if cur is None: continue
        for key, pat in (("regs", r"Registers Per Thread\s+register/thread\s+(\d+)"), ("us", r"Duration\s+us\s+([\d.]+)"),
                         ("ms", r"Duration\s+ms\s+([\d.]+)"), ("inst", r"Executed Instructions\s+inst\s+([\d,]+)")):
            m = re.search(pat, l)
            if m: cur[key] = m.group(1)
        if all(k in cur for k in ("regs", "inst")) and ("us" in cur or "ms" in cur):
            print(f"{cell:34} {side:8} {cur['name'][:44]:44} grid {cur['grid']:>5} x {cur['block']:>4}  regs {cur['regs']:>3}  {cur.get('us', cur.get('ms')):>6} us  {cur['inst']:>10} inst")
            cur = None
