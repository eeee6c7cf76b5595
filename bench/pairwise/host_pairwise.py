#!/usr/bin/env python3
"""Host pairwise distances, side by side in one run: spira's host engine, SuiteSparse:GraphBLAS
(cosine: plus_times mxm + expansion) and scikit-learn's pairwise_distances, all on the same
threads and the same float32 data. A = the first min(n, --max-rows) rows of each dataset, B = all
rows (the same slice for every tool). Writes bench/results/host_pairwise-DATE.json and regenerates
docs/bench-host-pairwise.md from it.

usage: bench/pairwise/host_pairwise.py --bench BUILD/bench/bench_host_pairwise [--threads T]
           [--max-rows R]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.metrics import pairwise_distances

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))  # datasets.py

from datasets import load_csr

DATA = os.path.join(ROOT, "..", "shared", "data")
DATASETS = [  # name, file, transpose (rows = samples)
    ("uci-bow-kos", "uci-bow-kos/docword.kos.mtx.gz", False),
    ("movielens-latest-small", "movielens-latest-small/ratings.mtx.gz", False),
    ("pbmc3k (cells x genes)", "pbmc3k/matrix.mtx.gz", True),
    ("20newsgroups", "20newsgroups/tfidf.mtx.gz", False),
    ("sec-edgar-names", "sec-edgar-names/char3gram_tfidf.mtx.gz", False),
    ("snap-email-enron (adjacency rows)", "snap-email-enron/email-Enron.txt.gz", False),
    ("suitesparse-1138_bus", "suitesparse-1138_bus/1138_bus.mtx", False),
]
METRICS = ["cosine", "manhattan"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--max-rows", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()

    rows = []
    for name, rel, transpose in DATASETS:
        path = os.path.join(DATA, rel)
        if not os.path.exists(path):
            print(f"skip {name}: {path} not found", file=sys.stderr)
            continue
        x = load_csr(path, transpose)
        r = min(x.shape[0], args.max_rows)
        for metric in METRICS:
            with tempfile.TemporaryDirectory() as tmp:
                cmd = [args.bench, path, "--metric", metric, "--rows", str(r), "--threads",
                       str(args.threads), "--repeats", str(args.repeats),
                       "--sample-out", os.path.join(tmp, "head")]
                if transpose:
                    cmd.append("--transpose")
                res = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
                head = np.load(os.path.join(tmp, "head.npy"))
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                ref = pairwise_distances(x[:r], x, metric=metric, n_jobs=args.threads)
                times.append(time.perf_counter() - t0)
                if times[-1] > 5.0:  # a slow peer is timed once; its noise is small against 5 s
                    break
            sk = float(np.median(times))
            ref_head = ref[: head.shape[0]]
            finite = np.isfinite(ref_head)  # scikit-learn leaves nothing non-finite here; guard anyway
            diff = float(np.abs(head[finite] - ref_head[finite]).max()) if finite.any() else 0.0
            row = dict(dataset=name, metric=metric, rows_a=r, rows_b=x.shape[0], cols=x.shape[1],
                       nnz=int(x.nnz), threads=args.threads, spira_s=res["spira_s"],
                       graphblas_s=res["graphblas_s"] if res["graphblas_s"] >= 0 else None,
                       sklearn_s=sk, max_abs_diff_vs_sklearn=diff,
                       max_abs_diff_vs_graphblas=res["max_abs_diff_vs_graphblas"]
                       if res["max_abs_diff_vs_graphblas"] >= 0 else None)
            rows.append(row)
            print(json.dumps(row), flush=True)

    today = datetime.date.today().isoformat()
    os.makedirs(args.out, exist_ok=True)
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    result = dict(benchmark="host_pairwise", date=today, machine=dict(cpu=cpu, cores=os.cpu_count(),
                  platform=platform.platform()), threads=args.threads, max_rows=args.max_rows,
                  repeats=args.repeats, results=rows)
    out_json = os.path.join(args.out, f"host_pairwise-{today}.json")
    with open(out_json, "w") as f:
        json.dump(result, f, indent=1)
    table = os.path.join(ROOT, "bench", "pairwise", "host_pairwise_table.py")
    subprocess.run([sys.executable, table, out_json], check=True)
    print(f"wrote {out_json}")


if __name__ == "__main__":
    main()
