#!/usr/bin/env python3
"""merge_digests.py FILE LOG [OUT]: FILE's digest lines with every `HASH key hex` line of LOG
put in (a recorded key replaces its line in place; a new key is appended), written to OUT
(default FILE). Prints what changed."""
import re, sys

path, log = sys.argv[1], sys.argv[2]
out = sys.argv[3] if len(sys.argv) > 3 else path
lines = open(path).read().splitlines()
recorded = {}
for l in open(log, errors="replace"):
    m = re.match(r"^HASH (\S+) ([0-9a-f]{16})\s*$", l)
    if m:
        recorded[m.group(1)] = m.group(2)
seen, changed = set(), 0
for i, l in enumerate(lines):
    m = re.match(r"^HASH (\S+) ([0-9a-f]{16})$", l)
    if m and m.group(1) in recorded:
        seen.add(m.group(1))
        if m.group(2) != recorded[m.group(1)]:
            print(f"changed {m.group(1)}: {m.group(2)} -> {recorded[m.group(1)]}")
            lines[i] = f"HASH {m.group(1)} {recorded[m.group(1)]}"
            changed += 1
added = [k for k in recorded if k not in seen]
for k in added:
    print(f"added {k}: {recorded[k]}")
    lines.append(f"HASH {k} {recorded[k]}")
open(out, "w").write("\n".join(lines) + "\n")
print(f"{len(recorded)} recorded, {changed} changed, {len(added)} added")
