#!/usr/bin/env python3
"""Summarise a timeline written by the cuda_trace injection library (bench/common/cuda_trace.cpp).

For a program that repeats one call (a benchmark's timed loop), the window is one cycle: from the
end of the (n+1)-th last kernel whose name holds --anchor to the end of the n-th last one. Prints,
in order, each runtime call of the window that took at least --min-us (the host side) and each
kernel / copy / memset (the device side) with the device's idle time before it, then totals:
device busy and idle time, and the runtime calls by name. The window is cut by device time: for a
loop that does not wait for each call, its runtime calls may belong to a later iteration.

usage: cuda_trace.py TRACE.tsv --anchor SUBSTRING [--nth N] [--min-us 5]
"""
import argparse
import collections
import sys


def load(path):
    out = []
    with open(path) as f:
        for line in f:
            kind, start, end, stream, corr, name = line.rstrip("\n").split("\t", 5)
            out.append((int(start), int(end), kind, int(stream), int(corr), name))
    out.sort()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--anchor", default="")
    ap.add_argument("--nth", type=int, default=1)
    ap.add_argument("--min-us", type=float, default=5.0)
    a = ap.parse_args()
    if a.nth < 1:
        sys.exit("cuda_trace.py: --nth counts from 1 (the last call)")
    recs = load(a.trace)
    device = [r for r in recs if r[2] in ("kernel", "copy", "memset")]
    anchors = [i for i, r in enumerate(device) if r[2] == "kernel" and a.anchor in r[5]]
    if len(anchors) < a.nth + 1:
        sys.exit("cuda_trace.py: fewer than %d kernels match --anchor %r" % (a.nth + 1, a.anchor))
    h0 = device[anchors[-a.nth - 1]][1]
    t1 = device[anchors[-a.nth]][1]
    window = [r for r in recs if h0 < r[0] <= t1]
    print("window: %.1f us, from the end of one %r kernel to the end of the next"
          % ((t1 - h0) / 1e3, a.anchor))
    busy = 0
    last_end = h0
    names = collections.defaultdict(lambda: [0, 0.0])
    for r in window:
        start, end, kind, stream, corr, name = r
        us = (end - start) / 1e3
        if kind == "runtime":
            names[name][0] += 1
            names[name][1] += us
            if us >= a.min_us:
                print("%9.1f  host   %8.1f us  %s" % ((start - h0) / 1e3, us, name))
        elif kind in ("kernel", "copy", "memset"):
            idle = max(start - last_end, 0) / 1e3
            busy += max(end - max(start, last_end), 0)  # overlapping work counted once
            last_end = max(last_end, end)
            print("%9.1f  device %8.1f us  (idle before %6.1f)  %s %s"
                  % ((start - h0) / 1e3, us, idle, kind, name[:100]))
    print("device busy %.1f us, idle %.1f us" % (busy / 1e3, (t1 - h0 - busy) / 1e3))
    print("runtime calls (count, total us):")
    for name, (n, us) in sorted(names.items(), key=lambda kv: -kv[1][1]):
        print("  %-40s %5d %9.1f" % (name, n, us))


if __name__ == "__main__":
    main()
