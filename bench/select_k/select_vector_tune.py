#!/usr/bin/env python3
"""Measures the constant C of Dr. Top-k's Rule 4 on this GPU: the delegate algorithm's time over
the sub-range length alpha (powers of two, 2^5 ... 2^16) for several (n, k), uniform input.

    python3 bench/select_k/select_vector_tune.py --bench BUILD/bench/select_vector_bench \\
        --out bench/results
    python3 bench/select_k/select_vector_tune.py --from RESULTS.json --out DIR   (the analysis only)

Model (Rule 4): T(alpha) = A + B / alpha + D * alpha, where B / alpha is the per-sub-range work
(delegates written, first top-k) and D * alpha the candidate work (qualifying sub-ranges read again,
second top-k). For each (n, k) the three coefficients are fitted by least squares over the sweep;
the model's optimum is alpha* = sqrt(B / D), and C(n, k) = alpha*^2 * k / n (reported as
"C_model", geometric mean over the cases). The constant used, "C", is the one whose rule
alpha = sqrt(C * n / k) (a power of two in [32, 2^16], capped so that beta * n / alpha >= 4 k, as in
src/selection/select_k.cpp) comes closest to the best measured time over all cases (geometric mean
of rule time / best time; the middle of the best interval of C on a 2^(1/4) grid). Writes
<out>/select_vector-tune-<YYYY-MM-DD>.json with the raw times, the fits and both constants.
"""
import argparse
import datetime
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))  # gpu_info.py

from gpu_info import torch_device_and_version


def solve3(m, v):
    """Solves the 3x3 system m x = v (Cramer's rule)."""
    def det(a):
        return (a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
                - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
                + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]))
    d = det(m)
    out = []
    for c in range(3):
        a = [row[:] for row in m]
        for r in range(3):
            a[r][c] = v[r]
        out.append(det(a) / d)
    return out


def fit(points):
    """Least squares T = A + B / a + D * a over (a, T) points."""
    feats = [(1.0, 1.0 / a, float(a)) for a, _ in points]
    m = [[sum(f[i] * f[j] for f in feats) for j in range(3)] for i in range(3)]
    v = [sum(f[i] * t for f, (_, t) in zip(feats, points)) for i in range(3)]
    return solve3(m, v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench")
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--from", dest="from_json",
                    help="analyse the sweep stored in this results file instead of measuring "
                         "(writes <out>/<its name> with the analysis redone)")
    args = ap.parse_args()
    if not args.from_json and not args.bench:
        ap.error("--bench is required unless --from is given")
    ns = [1 << 24, 1 << 28] if args.quick else [1 << 24, 1 << 26, 1 << 28, 1 << 30]
    ks = [16, 256, 4096, 1 << 16, 1 << 18]
    alphas = [1 << e for e in range(5, 17)]
    lines = []
    for n in ns:
        for k in ks:
            for a in alphas:
                if a < n:
                    lines.append("select %d %d delegate uniform %d" % (n, k, a))
    if args.from_json:
        with open(args.from_json) as f:
            stored = json.load(f)
        recs = [{"kind": "select", "n": c["n"], "k": c["k"], "subrange": p["alpha"], "ms": p["ms"]}
                for c in stored["cases"] for p in c["times"]]
        errors = stored["errors"]
        ns = sorted({c["n"] for c in stored["cases"]})
    else:
        proc = subprocess.run([args.bench], input="\n".join(lines) + "\n", capture_output=True,
                              text=True)
        sys.stderr.write(proc.stderr)
        recs = [json.loads(l) for l in proc.stdout.splitlines() if l.startswith("{")]
        errors = [r for r in recs if r["kind"] == "error"]
    cases = []
    for n in ns:
        for k in ks:
            pts = [(r["subrange"], r["ms"]) for r in recs
                   if r["kind"] == "select" and r["n"] == n and r["k"] == k]
            if len(pts) < 4:
                continue
            best_a, best_ms = min(pts, key=lambda p: p[1])
            A, B, D = fit(pts)
            model_a = math.sqrt(B / D) if B > 0 and D > 0 else None
            cases.append({"n": n, "k": k, "times": [{"alpha": a, "ms": t} for a, t in pts],
                          "best_alpha": best_a, "best_ms": best_ms,
                          "fit": {"A": A, "B": B, "D": D}, "model_alpha": model_a,
                          "C": model_a * model_a * k / n if model_a else None})
    cs = [c["C"] for c in cases if c["C"]]
    C_model = math.exp(sum(math.log(c) for c in cs) / len(cs)) if cs else None

    def rule_alpha(C, n, k):
        # std::lround rounds halves away from zero (Python's round() to even would pick another
        # power of two than the library whenever sqrt(C n / k) is an odd power of sqrt(2)).
        e = min(16, max(5, math.floor(math.log2(max(1.0, math.sqrt(C * n / k))) + 0.5)))
        while e > 5 and 2 ** e > 2.0 * n / (4.0 * k):
            e -= 1
        return 2 ** e

    def overhead(C):
        logs = []
        for c in cases:
            a = rule_alpha(C, c["n"], c["k"])
            t = next((p["ms"] for p in c["times"] if p["alpha"] == a), None)
            if t is None:
                return float("inf")
            logs.append(math.log(t / c["best_ms"]))
        return math.exp(sum(logs) / len(logs))

    grid = [2 ** (e / 4) for e in range(-8, 4 * 14 + 1)]
    scores = [overhead(C) for C in grid]
    best = min(scores)
    good = [C for C, sc in zip(grid, scores) if sc <= best * (1 + 1e-9)]
    C = math.sqrt(good[0] * good[-1])  # the middle (geometric) of the best interval
    for c in cases:  # how close the rule with C comes to the best measured alpha
        a = rule_alpha(C, c["n"], c["k"])
        t = next((p["ms"] for p in c["times"] if p["alpha"] == a), None)
        c["rule_alpha"] = a
        c["rule_ms"] = t
        c["rule_over_best"] = t / c["best_ms"] if t else None
    if args.from_json:
        device, date = stored["device"], stored["date"]
    else:
        device, _ = torch_device_and_version()
        date = datetime.date.today().isoformat()
    doc = {"date": date, "device": device, "dtype": "float32",
           "dist": "uniform", "order": "largest", "beta": 2, "C": C, "C_interval": [good[0], good[-1]],
           "rule_over_best_geomean": best, "C_model": C_model, "cases": cases,
           "errors": errors}
    os.makedirs(args.out, exist_ok=True)
    name = (os.path.basename(args.from_json) if args.from_json
            else "select_vector-tune-%s.json" % doc["date"])
    path = os.path.join(args.out, name)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", path)
    for c in cases:
        print("n=2^%d k=%-7d best alpha %-6d %.4f ms  model alpha %s  C %s  rule alpha %s (%s x best)" % (
            c["n"].bit_length() - 1, c["k"], c["best_alpha"], c["best_ms"],
            "%.0f" % c["model_alpha"] if c["model_alpha"] else "-",
            "%.3g" % c["C"] if c["C"] else "-", c.get("rule_alpha"),
            "%.2f" % c["rule_over_best"] if c.get("rule_over_best") else "-"))
    print("C = %s (best interval %s .. %s, rule / best = %.3f geometric mean); C_model = %s" % (
        C, good[0], good[-1], best, C_model))
    for e in errors:
        print("ERROR", e)


if __name__ == "__main__":
    main()
