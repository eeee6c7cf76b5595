#!/usr/bin/env python3
"""Tables of bench_knn records tagged with "build" (base / cur) and "round": one row per data set,
metric and round, host in/out and device in/out medians of both builds with their ratio, then
cosine over manhattan per build.

usage: table.py RECORDS.jsonl > TABLE.md
"""
import json
import sys
from collections import defaultdict


def main():
    recs = defaultdict(dict)
    for line in open(sys.argv[1]):
        r = json.loads(line)
        key = (r.get("label") or r.get("dataset"), r["round"], r["metric"])
        recs[key][r["build"]] = (r["median_ms"], r["resident_median_ms"])
    print("| data | round | metric | base host | cur host | cur/base | base device | cur device | cur/base |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (data, rnd, metric), b in sorted(recs.items()):
        if "base" in b and "cur" in b:
            (bh, bd), (ch, cd) = b["base"], b["cur"]
            print(f"| {data} | {rnd} | {metric} | {bh:.3f} | {ch:.3f} | {ch / bh:.3f} | {bd:.3f} | {cd:.3f} | {cd / bd:.3f} |")
    print()
    print("| data | round | build | cosine / manhattan, host | device |")
    print("| --- | ---: | --- | ---: | ---: |")
    for (data, rnd, metric), b in sorted(recs.items()):
        if metric != "cosine":
            continue
        m = recs.get((data, rnd, "manhattan"), {})
        for build in ("base", "cur"):
            if build in b and build in m:
                print(f"| {data} | {rnd} | {build} | {b[build][0] / m[build][0]:.3f} | {b[build][1] / m[build][1]:.3f} |")


if __name__ == "__main__":
    main()
