#!/usr/bin/env python3
"""Prints the A/B table of this folder: per shape, the fastest of the two rounds of each build."""
import collections
import glob
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(os.path.join(here, "ab_*.jsonl")):
    build = os.path.basename(f).split("_")[1]
    for line in open(f):
        if line.startswith("{"):
            r = json.loads(line)
            if r.get("kind") == "select_k":
                t[(r["rows"], r["length"], r["k"], r["dist"])][build].append(r["ms"])
print("rows length k dist | base ms | new ms | new / base")
for key in sorted(t):
    b, n = min(t[key]["base"]), min(t[key]["new"])
    print("%d %d %d %s | %.4f | %.4f | %.3f" % (key + (b, n, n / b)))
