#!/usr/bin/env python3
"""GPU pairwise benchmark driver: runs bench_pairwise_gpu over every dataset and the synthetic
Table 2 shapes within one time budget and writes the JSON lines bench/pairwise/pairwise_gpu_table.py
reads.

usage: bench/pairwise/pairwise_gpu.py --bench BUILD/bench/bench_pairwise_gpu --data DIR --out FILE
                                      [--deadline SECONDS] [--quick] [--synthetic-rows N]
                                      [--only LABEL,..] [--dry-run [--exact]]

Cases, in this order (each case is one process: load once, then every metric x strategy):
  1. every dataset folder of DATA (the known ones with their file and orientation, any other folder
     with its first matrix file), A = B = all rows; metrics cosine, euclidean, manhattan,
     chebyshev, jensenshannon; strategies automatic, intersection, hybrid, dense (dot-product
     metrics), cuSPARSE SpGEMM (dot-product metrics) and spira's host engine;
  2. the synthetic Table 2 shapes (bench/common/synthetic.hpp: movielens-large, sec-edgar, scrna,
     nytimes-bow) at full size as B, A = their first --synthetic-rows rows (default 1,024; 512
     with --quick); cosine and manhattan, every strategy the budget rules of bench_pairwise_gpu
     allow (its --max-hybrid-work / --max-dense-flops);
  3. unless --quick, the synthetic shapes again for euclidean, chebyshev and jensenshannon.
Time: --deadline seconds from the start (default 300). Each case gets a share of the time left in
proportion to its weight (what an earlier case leaves unused goes to the later ones) and passes it
to the benchmark as --deadline-at, so that no (metric, strategy) starts after it; a case that has
no time left at all is written as "skipped": "deadline" records. The host engine runs on all cores
of the machine (spira::host_resources{0}: OMP_NUM_THREADS or every hardware thread).
--dry-run prints the case list with sizes estimated from the file headers and the synthetic
shapes (no GPU, no benchmark binary needed); with --exact it runs bench_pairwise_gpu --dry-run for
exact statistics (loads every matrix and generates the synthetic ones: minutes on a small host).
"""
import argparse
import datetime
import gzip
import json
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Known datasets of ../shared/data: label, file, transpose (rows = samples), weight (time share).
KNOWN = [
    ("uci-bow-kos", "uci-bow-kos/docword.kos.mtx.gz", False, 1),
    ("movielens-latest-small", "movielens-latest-small/ratings.mtx.gz", False, 1),
    ("sec-edgar-names", "sec-edgar-names/char3gram_tfidf.mtx.gz", False, 1),
    ("suitesparse-1138_bus", "suitesparse-1138_bus/1138_bus.mtx", False, 1),
    ("snap-email-enron", "snap-email-enron/email-Enron.txt.gz", False, 3),
    ("pbmc3k-cells", "pbmc3k/matrix.mtx.gz", True, 3),
    ("20newsgroups", "20newsgroups/tfidf.mtx.gz", False, 5),
]
KNOWN_FOLDERS = {f.split("/")[0] for _, f, _, _ in KNOWN}
MATRIX_SUFFIXES = (".mtx", ".mtx.gz", ".npz", ".svm", ".svmlight", ".libsvm", ".svm.gz",
                   ".edges", ".el", ".txt.gz")

# bench/common/synthetic.hpp's Table 2 shapes: rows, cols, density.
SYNTHETIC = {
    "sec-edgar": (663000, 858000, 0.000007),
    "nytimes-bow": (300000, 102660, 0.002),
    "movielens-large": (283228, 193886, 0.0005),
    "scrna": (66000, 26000, 0.07),
}
SYNTHETIC_WEIGHT = {"sec-edgar": 2, "nytimes-bow": 4, "movielens-large": 4, "scrna": 4}

REAL_METRICS = "cosine,manhattan,chebyshev,jensenshannon,euclidean"
SYNTH_METRICS = "cosine,manhattan"
SYNTH_EXTRA_METRICS = "chebyshev,jensenshannon,euclidean"
STRATEGIES = "automatic,cusparse,host,intersection,hybrid,dense"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def discover(data):
    """The real-data cases: the known folders that exist, then every other folder of `data` with a
    matrix file (held-out data sets), by name."""
    cases = []
    for label, rel, transpose, weight in KNOWN:
        path = os.path.join(data, rel)
        if os.path.exists(path):
            cases.append(dict(label=label, args=["--file", path] + (["--transpose"] if transpose else []),
                              path=path, transpose=transpose, weight=weight, metrics=REAL_METRICS))
        else:
            log(f"pairwise_gpu.py: {path} is missing; {label} is left out")
    for folder in sorted(os.listdir(data)) if os.path.isdir(data) else []:
        full = os.path.join(data, folder)
        if folder in KNOWN_FOLDERS or not os.path.isdir(full):
            continue
        # The first file of the most specific kind: Matrix Market, then npz, svmlight, edge lists.
        names = sorted(os.listdir(full))
        files = [f for suffix in MATRIX_SUFFIXES for f in names if f.endswith(suffix)]
        if not files:
            log(f"pairwise_gpu.py: {full} holds no matrix file; left out")
            continue
        path = os.path.join(full, files[0])
        cases.append(dict(label=folder, args=["--file", path], path=path, transpose=False, weight=3,
                          metrics=REAL_METRICS))
    return cases


def synthetic_cases(rows, metrics, phase):
    # Phase 3 (the extra metrics) weighs little: it gets mostly what the others leave unused.
    return [dict(label=f"synthetic-{name}", args=["--synthetic", name, "--query-rows", str(rows)],
                 synthetic=name, query_rows=rows, metrics=metrics,
                 weight=SYNTHETIC_WEIGHT[name] if phase == 2 else 1,
                 phase=phase)
            for name in ("sec-edgar", "nytimes-bow", "movielens-large", "scrna")]


def header_shape(case):
    """(rows_a, rows_b, cols, nnz_b) estimated without loading the matrix."""
    if "synthetic" in case:
        rows, cols, density = SYNTHETIC[case["synthetic"]]
        return min(case["query_rows"], rows), rows, cols, int(rows * cols * density)
    path = case["path"]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        first = f.readline()
        if first.startswith("%%MatrixMarket"):
            symmetric = "symmetric" in first.lower()
            for line in f:
                if not line.startswith("%"):
                    r, c, nnz = (int(x) for x in line.split()[:3])
                    break
            if symmetric:
                nnz = 2 * nnz  # an upper bound: the diagonal is stored once
            if case["transpose"]:
                r, c = c, r
            return r, r, c, nnz
        if path.endswith((".txt.gz", ".txt", ".edges", ".el")):
            n, nnz = 0, 0
            for line in [first] + list(f):
                if line.startswith("#") or not line.strip():
                    continue
                s, d = line.split()[:2]
                n = max(n, int(s) + 1, int(d) + 1)
                nnz += 1
            return n, n, n, nnz
    return None


def dry_run(cases, args):
    print(f"{'case':32} {'metrics':42} {'A x B':>20} {'nnz(B)':>12} {'output':>9} "
          f"{'hybrid work':>12} {'dense flops':>12}")
    for c in cases:
        shape = header_shape(c)
        if shape is None:
            print(f"{c['label']:32} {c['metrics']:42} (size unknown without loading)")
            continue
        ra, rb, cols, nnz = shape
        nnz_a = nnz * ra // max(rb, 1)
        print(f"{c['label']:32} {c['metrics']:42} {f'{ra:,} x {rb:,}':>20} {nnz:>12,} "
              f"{ra * rb * 4 / 1e9:>7.2f}GB {ra * nnz + rb * nnz_a:>12.3g} {2 * ra * rb * cols:>12.3g}")
    print(f"\n{len(cases)} cases; strategies {STRATEGIES}; deadline {args.deadline:.0f} s; "
          f"synthetic A = first {args.synthetic_rows} rows")
    if args.exact:
        for c in cases:
            cmd = [args.bench] + c["args"] + ["--label", c["label"], "--metrics", c["metrics"],
                                              "--strategies", STRATEGIES, "--dry-run"] + bench_limits(args)
            res = subprocess.run(cmd, capture_output=True, text=True)
            sys.stdout.write(res.stdout)
            if res.returncode != 0:
                log(res.stderr.strip())


def bench_limits(args):
    out = ["--repeats", str(args.repeats), "--case-budget-ms", str(args.case_budget_ms),
           "--host-budget-ms", str(args.host_budget_ms)]
    if args.max_hybrid_work:
        out += ["--max-hybrid-work", str(args.max_hybrid_work)]
    if args.max_dense_flops:
        out += ["--max-dense-flops", str(args.max_dense_flops)]
    return out


def machine():
    info = dict(host=platform.node(), platform=platform.platform(), cores=os.cpu_count())
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        info["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                      "--format=csv,noheader"], capture_output=True, text=True,
                                     timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        info["gpu"] = None
    try:
        info["commit"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True, timeout=10).stdout.strip()
        info["dirty"] = bool(subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                                            capture_output=True, text=True, timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def skipped_records(case, reason):
    return [dict(dataset=case["label"], metric=m, strategy="*", skipped=reason, error="",
                 phase=case.get("phase", 1))
            for m in case["metrics"].split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bench", "bench_pairwise_gpu"))
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--out", default=None, help="JSON lines (default: stdout)")
    ap.add_argument("--deadline", type=float, default=300, help="seconds for the whole run")
    ap.add_argument("--quick", action="store_true",
                    help="3 timed calls, 512 synthetic query rows, no phase 3")
    ap.add_argument("--synthetic-rows", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--case-budget-ms", type=float, default=1500)
    ap.add_argument("--host-budget-ms", type=float, default=400)
    ap.add_argument("--max-hybrid-work", type=float, default=None)
    ap.add_argument("--max-dense-flops", type=float, default=None)
    ap.add_argument("--only", default="", help="comma-separated case labels")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--exact", action="store_true", help="with --dry-run: exact statistics")
    args = ap.parse_args()
    if args.synthetic_rows is None:
        args.synthetic_rows = 512 if args.quick else 1024
    if args.repeats is None:
        args.repeats = 3 if args.quick else 5
    if args.quick:
        args.case_budget_ms = min(args.case_budget_ms, 800)
        args.host_budget_ms = min(args.host_budget_ms, 250)

    cases = [dict(c, phase=1) for c in discover(args.data)]
    cases += synthetic_cases(args.synthetic_rows, SYNTH_METRICS, 2)
    if not args.quick:
        cases += synthetic_cases(args.synthetic_rows, SYNTH_EXTRA_METRICS, 3)
    if args.only:
        wanted = set(args.only.split(","))
        cases = [c for c in cases if c["label"] in wanted]
    if args.dry_run:
        dry_run(cases, args)
        return 0

    t0 = time.time()
    end = t0 + args.deadline
    out = open(args.out, "w") if args.out else sys.stdout
    meta = dict(record="meta", benchmark="pairwise_gpu", date=datetime.date.today().isoformat(),
                machine=machine(), deadline_s=args.deadline, quick=args.quick,
                synthetic_rows=args.synthetic_rows, repeats=args.repeats,
                case_budget_ms=args.case_budget_ms, host_budget_ms=args.host_budget_ms,
                strategies=STRATEGIES, cases=[c["label"] + f"@{c['phase']}" for c in cases])
    out.write(json.dumps(meta) + "\n")
    out.flush()
    weights_left = sum(c["weight"] for c in cases)
    for c in cases:
        now = time.time()
        left = end - now
        share = left * c["weight"] / max(weights_left, 1)
        weights_left -= c["weight"]
        if left < 3:
            log(f"== {c['label']} (phase {c['phase']}): no time left; skipped")
            for r in skipped_records(c, "deadline (case not started)"):
                out.write(json.dumps(r) + "\n")
            out.flush()
            continue
        case_end = now + share
        cmd = [args.bench] + c["args"] + ["--label", c["label"], "--metrics", c["metrics"],
                                          "--strategies", STRATEGIES,
                                          "--deadline-at", f"{case_end:.1f}"] + bench_limits(args)
        log(f"== {c['label']} (phase {c['phase']}): {share:.0f} s of {left:.0f} s left")
        seen = set()
        try:
            # One call may run past the case's share (no case starts after it); the hard limit is
            # the whole run's end plus a grace period for the call in flight.
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=max(left, 5) + 20)
            stdout, code, err = res.stdout, res.returncode, res.stderr
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            code = "timeout"
        for line in stdout.splitlines():
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            r["phase"] = c["phase"]
            seen.add(r["metric"])
            out.write(json.dumps(r) + "\n")
        if code != 0:
            msg = f"bench_pairwise_gpu exit {code}: " + " | ".join(err.strip().splitlines()[-3:])
            log(msg)
            out.write(json.dumps(dict(dataset=c["label"], metric="*", strategy="*", phase=c["phase"],
                                      skipped="", error=msg)) + "\n")
        out.flush()
        log(f"   done in {time.time() - now:.1f} s")
    log(f"== all cases in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
