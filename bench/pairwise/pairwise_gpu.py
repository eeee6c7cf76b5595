#!/usr/bin/env python3
"""GPU pairwise benchmark driver: runs bench_pairwise_gpu over every dataset and the synthetic
Table 2 shapes within one time budget and writes the JSON lines bench/pairwise/pairwise_gpu_table.py
reads.

usage: bench/pairwise/pairwise_gpu.py --bench BUILD/bench/bench_pairwise_gpu --data DIR --out FILE
                                      [--deadline SECONDS] [--quick] [--synthetic-rows N]
                                      [--raft PATH/raft_anchor [--raft-limit S]]
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

RAFT 25.10 (--raft, default $SPIRA_RAFT_PEER: raft_anchor, built from
../shared/tools/peers/raft_anchor.cu by raft-build.sh there; unset: RAFT is not run and the meta
record says so) runs right after spira on each real dataset, as a case of its own with the
dataset's weight: `raft_anchor spdist MTX METRIC NQ` reads the matrix bench_pairwise_gpu read
(float32 CSR, loaded here by the rules of spira's reader, docs/io.md, and checked against the
shape and entries bench_pairwise_gpu reported), written once per dataset as a Matrix Market file; it copies
it to the device once and times raft::sparse::distance::pairwise_distance of its first NQ rows
against all rows into a dense float32 matrix in device memory (CUDA events; median of 10 runs after
3 warm-ups: 13 runs a process). Metrics: cosine -> cosine (CosineExpanded), euclidean -> l2
(L2SqrtExpanded), manhattan -> l1, chebyshev -> linf, jensenshannon -> js (RAFT takes the rows as
they are; spira divides each by its sum first: the same walk over the union, other values). RAFT's
distances are not compared with spira's (spdist returns none). A real dataset is A = B, all rows:
RAFT runs it with NQ = all rows. The synthetic shapes are "not_comparable" (their matrix exists
only inside bench_pairwise_gpu). Cap: --raft-limit seconds of processes a (dataset, metric), less
when the case's share of the deadline is smaller: a probe on --raft-probe-rows query rows, then all
rows when 13 runs of them (and the process' own overhead, measured by the probe) fit, else the
largest prefix that fits (at least twice the probe), projected linearly to all rows
("extrapolated": true, "measured_rows"). Records: "record": "raft" with "raft_ms" (all rows) or
"raft_error", "skipped", "not_comparable"; every process in "runs".
"""
import argparse
import datetime
import gzip
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))  # datasets.py, raft_peer.py

from raft_peer import (RAFT_METRICS, RAFT_RUNS, RAFT_VERSION, capped_rows, raft_description,
                       require_binary, run_anchor, run_record, write_mtx)

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

RAFT_TIMING = ("raft::sparse::distance::pairwise_distance (raft_anchor spdist): device CSR in "
               "(float32 values, int32 indices, copied once per process before timing), dense "
               "float32 distance matrix out in device memory; CUDA events on the RAFT handle's "
               "stream, median of 10 runs after 3 warm-ups, rmm pool memory resource; RAFT's "
               "distances are not compared with spira's")


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


def load_matrix(path, transpose):
    """The file of a real-data case as bench_pairwise_gpu reads it (spira::io::read_matrix, rules in
    docs/io.md), for RAFT: a canonical float32 CSR. Matrix Market through bench/common/datasets.py;
    .npz (scipy.sparse.save_npz), svmlight (read_svmlight) and edge lists (`src dst [weight]`, n x n
    with n = the largest id + 1) here."""
    import numpy as np
    import scipy.sparse as sp
    from datasets import canonical_csr, load_csr

    name = path[:-3] if path.endswith(".gz") else path
    if name.endswith(".npz"):
        m = sp.load_npz(path)
    elif name.endswith((".svm", ".svmlight", ".libsvm")):
        m = read_svmlight(path)
    elif name.endswith((".edges", ".el", ".txt")):
        e = np.loadtxt(path, comments=("#", "%"), ndmin=2)
        ids = e[:, :2].astype(np.int64)
        n = int(ids.max()) + 1 if len(ids) else 0
        w = e[:, 2] if e.shape[1] > 2 else np.ones(len(ids))
        m = sp.coo_matrix((w, (ids[:, 0], ids[:, 1])), shape=(n, n))
    else:
        return load_csr(path, transpose)
    return canonical_csr(m, transpose)


def read_svmlight(path):
    """`label [qid:q] idx:val ...` per line, '#' comments, labels dropped; zero-based when an index
    0 appears, else one-based; columns: one past the largest index (docs/io.md)."""
    import gzip

    import numpy as np
    import scipy.sparse as sp

    rows, cols, vals = [], [], []
    n = 0
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            for w in words[1:]:
                k, _, v = w.partition(":")
                if k != "qid":
                    rows.append(n)
                    cols.append(int(k))
                    vals.append(float(v))
            n += 1
    cols = np.asarray(cols, dtype=np.int64)
    if cols.size and cols.min() > 0:
        cols -= 1
    return sp.coo_matrix((vals, (rows, cols)), shape=(n, int(cols.max()) + 1 if cols.size else 0))


def raft_record(case, metric, **fields):
    rec = dict(record="raft", tool="raft", dataset=case["label"], metric=metric,
               phase=case.get("phase", 1), raft_metric=RAFT_METRICS.get(metric), raft_ms=None,
               extrapolated=False, measured_rows=None, raft_error=None)
    rec.update(fields)
    return rec


def raft_not_comparable(case):
    """The synthetic shapes: A = the first rows of B, a matrix generated inside bench_pairwise_gpu
    (bench/common/synthetic.hpp) that no file holds for raft_anchor to read."""
    why = (f"A = the first {case['query_rows']:,} rows of B, the synthetic {case['synthetic']} "
           "matrix generated inside bench_pairwise_gpu; raft_anchor spdist reads its matrix from a "
           "file, and none holds this one")
    return [raft_record(case, m, not_comparable=why) for m in case["metrics"].split(",")]


def raft_case(case, spira_shape, args, run_end, case_end, tmp, write):
    """RAFT on a real dataset (module docstring): every metric of the case, each capped at
    min(--raft-limit, the case's time left / metrics left) seconds of raft_anchor processes; a
    failure is a record ("raft_error"), never an exception. spira_shape: (rows, cols, nnz) that
    bench_pairwise_gpu reported, or None when it reported none."""
    metrics = case["metrics"].split(",")
    try:
        require_binary(args.raft)
        t0 = time.perf_counter()
        x = load_matrix(case["path"], case["transpose"])
        shape = (x.shape[0], x.shape[1], int(x.nnz))
        if spira_shape is not None and tuple(spira_shape) != shape:
            raise RuntimeError(f"RAFT's copy of the matrix ({shape[0]:,} x {shape[1]:,}, "
                               f"{shape[2]:,} entries) differs from bench_pairwise_gpu's "
                               f"({spira_shape[0]:,} x {spira_shape[1]:,}, {spira_shape[2]:,} "
                               "entries)")
        mtx = os.path.join(tmp, "x.mtx")
        write_mtx(x, mtx)
        log(f"   RAFT: {case['label']} loaded and written as {mtx} in "
            f"{time.perf_counter() - t0:.1f} s")
    except Exception as e:  # noqa: BLE001 - RAFT's failure is a result
        for m in metrics:
            write(raft_record(case, m, raft_error=f"{type(e).__name__}: {e}"[:500]))
        return
    n, cols, nnz = shape
    base = dict(version=RAFT_VERSION, rows_a=n, rows_b=n, cols=cols, nnz_b=nnz,
                matrix_checked=spira_shape is not None)
    for i, m in enumerate(metrics):
        now = time.time()
        if m not in RAFT_METRICS:
            write(raft_record(case, m, **base, not_comparable=f"no RAFT metric mapped for {m}"))
            continue
        if run_end - now < 15:
            write(raft_record(case, m, **base, skipped="deadline (RAFT not started)"))
            continue
        limit = max(0.0, min(args.raft_limit, (case_end - now) / (len(metrics) - i)))
        rec = raft_record(case, m, **base, limit_s=round(limit, 1), runs=[])

        def run(rows, expected):
            timeout = max(5.0, min(max(expected, 30.0), run_end - time.time() - 5))
            cmd = [args.raft, "spdist", mtx, RAFT_METRICS[m], str(rows)]
            ms, facts, wall = run_anchor(cmd, rows, timeout)
            rec["runs"].append(run_record(ms, wall, facts, rows))
            rec.setdefault("device", facts.get("device"))
            read = tuple(int(facts.get(f, -1)) for f in ("rows", "cols", "nnz"))
            if read[:2] != (n, cols):
                raise RuntimeError(f"raft_anchor read a {read[0]} x {read[1]} matrix, not "
                                   f"{n} x {cols}")
            if read[2] != nnz:
                rec["nnz_read"] = read[2]
            return ms, wall, None

        try:
            ms, rows, _ = capped_rows(rec, n, args.raft_probe_rows, limit, run)
            rec.update(raft_ms=ms * n / rows, measured_rows=rows, extrapolated=rows < n)
        except Exception as e:  # noqa: BLE001 - RAFT's failure is a result
            rec["raft_error"] = f"{type(e).__name__}: {e}"[:500]
        write(rec)
        if rec["raft_ms"] is None:
            log(f"   RAFT {m}: {rec['raft_error']}")
        else:
            log(f"   RAFT {m}: {rec['raft_ms']:.4g} ms" + (
                f" (projected from {rec['measured_rows']:,} rows)" if rec["extrapolated"] else ""))
    os.remove(mtx)


def spira_case(c, args, left, case_end, write):
    """One bench_pairwise_gpu process; its records are written as they come. Returns (rows, cols,
    nnz) of B as it reported them, or None."""
    cmd = [args.bench] + c["args"] + ["--label", c["label"], "--metrics", c["metrics"],
                                      "--strategies", STRATEGIES,
                                      "--deadline-at", f"{case_end:.1f}"] + bench_limits(args)
    shape = None
    try:
        # One call may run past the case's share (no case starts after it); the hard limit is
        # the whole run's end plus a grace period for the call in flight.
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=max(left, 5) + 20)
        stdout, code, err = res.stdout, res.returncode, res.stderr
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        code = "timeout"
    except OSError as e:
        stdout, code, err = "", "not started", str(e)
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        r["phase"] = c["phase"]
        if shape is None and r.get("rows_b") is not None:
            shape = (r["rows_b"], r.get("cols"), r.get("nnz_b"))
        write(r)
    if code != 0:
        msg = f"bench_pairwise_gpu exit {code}: " + " | ".join(err.strip().splitlines()[-3:])
        log(msg)
        write(dict(dataset=c["label"], metric="*", strategy="*", phase=c["phase"], skipped="",
                   error=msg))
    return shape


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
    ap.add_argument("--raft", default=os.environ.get("SPIRA_RAFT_PEER") or None,
                    help="raft_anchor (default $SPIRA_RAFT_PEER; unset: RAFT is not run)")
    ap.add_argument("--raft-limit", type=float, default=30,
                    help="seconds of raft_anchor processes per (dataset, metric), each 13 runs")
    ap.add_argument("--raft-probe-rows", type=int, default=1024,
                    help="query rows of the first raft_anchor process of a (dataset, metric)")
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
    raft_desc = raft_description(args.raft) if args.raft else \
        "not run: --raft / $SPIRA_RAFT_PEER unset"
    if args.dry_run:
        dry_run(cases, args)
        real = [c["label"] for c in cases if "synthetic" not in c]
        print(f"RAFT: {raft_desc}" + (f"; spdist after each of {', '.join(real) or 'no case'}, "
                                      f"at most {args.raft_limit:.0f} s a (dataset, metric); the "
                                      "synthetic shapes not comparable" if args.raft else ""))
        return 0
    # RAFT runs right after spira on each real dataset, as an item with the dataset's weight.
    items = []
    for c in cases:
        items.append(dict(c, kind="spira"))
        if args.raft and "synthetic" not in c:
            items.append(dict(c, kind="raft"))

    t0 = time.time()
    end = t0 + args.deadline
    out = open(args.out, "w") if args.out else sys.stdout

    def write(r):
        out.write(json.dumps(r) + "\n")
        out.flush()

    meta = dict(record="meta", benchmark="pairwise_gpu", date=datetime.date.today().isoformat(),
                machine=machine(), deadline_s=args.deadline, quick=args.quick,
                synthetic_rows=args.synthetic_rows, repeats=args.repeats,
                case_budget_ms=args.case_budget_ms, host_budget_ms=args.host_budget_ms,
                strategies=STRATEGIES, cases=[c["label"] + f"@{c['phase']}" for c in cases],
                raft=raft_desc)
    if args.raft:
        meta.update(raft_timing=RAFT_TIMING, raft_metrics=RAFT_METRICS, raft_runs=RAFT_RUNS,
                    raft_limit_s=args.raft_limit, raft_probe_rows=args.raft_probe_rows)
    write(meta)
    weights_left = sum(c["weight"] for c in items)
    spira_shape = {}
    with tempfile.TemporaryDirectory() as tmp:
        for c in items:
            now = time.time()
            left = end - now
            share = left * c["weight"] / max(weights_left, 1)
            weights_left -= c["weight"]
            what = f"{c['label']} (phase {c['phase']}" + (", RAFT)" if c["kind"] == "raft" else ")")
            if left < 3:
                log(f"== {what}: no time left; skipped")
                for r in (skipped_records(c, "deadline (case not started)") if c["kind"] == "spira"
                          else [raft_record(c, m, skipped="deadline (RAFT not started)")
                                for m in c["metrics"].split(",")]):
                    write(r)
                continue
            log(f"== {what}: {share:.0f} s of {left:.0f} s left")
            if c["kind"] == "raft":
                raft_case(c, spira_shape.get(c["label"]), args, end, now + share, tmp, write)
            else:
                spira_shape[c["label"]] = spira_case(c, args, left, now + share, write)
                if args.raft and "synthetic" in c:
                    for r in raft_not_comparable(c):
                        write(r)
            log(f"   done in {time.time() - now:.1f} s")
    log(f"== all cases in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
