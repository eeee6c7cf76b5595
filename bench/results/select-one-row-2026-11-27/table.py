#!/usr/bin/env python3
"""Tables of this folder's runs (never edit the numbers by hand):

    python3 table.py [PREFIX [FOLDER]]     PREFIX: final (default), grouped or warp-lookback;
                                           FOLDER: where PREFIX-*.jsonl are (default: this one)

For the normal keys timed like CUB (`resident int32`): radix (the one-row form), delegate, the
algorithm choose_select_algo picks for one row (src/selection/select_k.cpp) and CUB's DeviceTopK
from the same run; then radix against delegate on the other key distributions."""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
prefix = sys.argv[1] if len(sys.argv) > 1 else "final"
folder = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else here


def lines(name):
    return [json.loads(l) for l in open(os.path.join(folder, name)) if l.startswith("{")]


spira = {}
for r in lines(prefix + "-spira.jsonl"):
    if r.get("kind") == "select":
        spira[(r["dist"], r["n"], r["k"], r["algo"], bool(r.get("pool")), r["resident"])] = r
cub = {(r["n"], r["k"]): r["median_ms"] for r in lines(prefix + "-cub.jsonl")}


root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
sys.path.insert(0, os.path.join(root, "bench", "select_k"))
from select_vector_table import auto_for_one_row  # noqa: E402


def auto(n, k):  # choose_select_algo for one row, from include/spira/select_k.hpp
    return auto_for_one_row(root, n, k)


def ms(key):
    r = spira.get(key)
    return None if r is None else r["ms"]


def fmt(x):
    return "-" if x is None else "%.4f" % x


print("| n | k | radix ms | radix, pool ms | delegate ms | auto | CUB ms | CUB / auto |")
print("|---:|---:|---:|---:|---:|---|---:|---:|")
won = lost = 0
for (n, k) in sorted(cub):
    a = auto(n, k)
    r = ms(("normal", n, k, "radix", False, True))
    p = ms(("normal", n, k, "radix", True, True))
    d = ms(("normal", n, k, "delegate", False, True))
    at = r if a == "radix" else d
    ratio = None if at is None else cub[(n, k)] / at
    if ratio is not None:
        won += ratio > 1
        lost += ratio <= 1
    print("| 2^%d | %d | %s | %s | %s | %s | %s | %s |" % (
        n.bit_length() - 1, k, fmt(r), fmt(p), fmt(d), a, fmt(cub[(n, k)]),
        "-" if ratio is None else "%.2f" % ratio))
print("\nauto faster than CUB in %d of %d (n, k)\n" % (won, won + lost))
# The other keys (inputs rotated), and normal keys at shapes without a CUB run (resident).
others = sorted({(dd, n, k, res) for (dd, n, k, _, _, res) in spira
                 if (dd != "normal" and not res) or (dd == "normal" and res and (n, k) not in cub)})
if others:
    print("| keys | n | k | radix ms | delegate ms | delegate / radix |")
    print("|---|---:|---:|---:|---:|---:|")
    for (dd, n, k, res) in others:
        r = ms((dd, n, k, "radix", False, res))
        d = ms((dd, n, k, "delegate", False, res))
        print("| %s | 2^%d | %d | %s | %s | %s |" % (
            dd + (", resident" if res else ""), n.bit_length() - 1, k, fmt(r), fmt(d),
            "-" if None in (r, d) else "%.2f" % (d / r)))
