#!/usr/bin/env python3
"""The gate sweep's table from sweep.jsonl: device in/out median ms per data set and metric (rows),
one column per build and gate setting (new-<by_products>-<walk_skipping>; base = the build before)."""
import json
import sys

t, order, builds = {}, [], []
for line in open(sys.argv[1] if len(sys.argv) > 1 else "sweep.jsonl"):
    r = json.loads(line)
    k = (r["dataset"], r["metric"])
    if k not in order:
        order.append(k)
    if r["build"] not in builds:
        builds.append(r["build"])
    t[k + (r["build"],)] = r.get("resident_median_ms") or r["median_ms"]
print(f"{'':34s}" + "".join(f"{b:>10s}" for b in builds))
for k in order:
    print(f"{k[0]:21s}{k[1]:13s}" + "".join(
        f"{t[k + (b,)]:10.3f}" if k + (b,) in t else f"{'-':>10s}" for b in builds))
