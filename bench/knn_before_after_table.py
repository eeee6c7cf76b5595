#!/usr/bin/env python3
"""The table of bench/knn_before_after.sh from its JSON lines: per dataset and metric, the median
and the fastest of the timed calls of the base and the current build, and current / base for
both (the fastest is the steadier figure when the host adds jitter)."""
import json
import sys


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    t = {}
    for r in rows:
        key = (r.get("dataset"), r.get("metric"))
        t.setdefault(key, {})[r["tool"]] = r if r.get("error") is None else None
    print(f"{'dataset':26s} {'metric':10s} {'base med':>9s} {'cur med':>9s} {'ratio':>6s}"
          f" {'base min':>9s} {'cur min':>9s} {'ratio':>6s}")
    for (label, metric), v in t.items():
        b, c = v.get("base"), v.get("current")
        cells = []
        for field in ("median_ms", "min_ms"):
            bv = b.get(field) if b else None
            cv = c.get(field) if c else None
            cells.append(f"{bv:9.3f}" if bv is not None else f"{'-':>9s}")
            cells.append(f"{cv:9.3f}" if cv is not None else f"{'-':>9s}")
            cells.append(f"{cv / bv:6.3f}" if bv and cv is not None else f"{'-':>6s}")
        print(f"{label!s:26s} {metric!s:10s} " + " ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1])
