#!/usr/bin/env python3
"""Where the Python layer's time over the C++ call goes, on one backend: for each dataset and
metric, interleaved, median of --repeats runs each:

  cpp          spira::knn_graph in C++ (bench_knn, in --rounds processes of --repeats / --rounds
               calls each, the rounds interleaved with the Python variants' rounds: the median
               of all its calls; the medians of each process are kept as cpp_rounds, to show
               how much one process differs from the next)
  core_thread  spira._core.kneighbors called from a thread other than the main one: the binding
               passes no callback (no Ctrl-C check), so the library runs as in C++
  core_main    the same from the main thread: the binding passes its Ctrl-C callback
  public       spira.kneighbors(X): the package's input checks and conversions too

The three Python variants are interleaved. core_thread - cpp is the binding's own cost (argument checks, result arrays); core_main -
core_thread what the Ctrl-C callback costs the library's schedule; public - core_main the
Python-side input handling. Prints one JSON line per case; --out writes them all.

usage: bench/python/binding_overhead.py --bench BUILD/bench/bench_knn --device cuda
                                        [--datasets 20newsgroups,...] [--repeats 10]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))
from datasets import DATASETS, load_csr  # noqa: E402


def times_ms(fns, repeats, times):
    """Calls each of `fns` (name -> callable) in turn, `repeats` times, appending each call's time
    in ms to times[name]: the variants are interleaved, so that a drift of the machine's speed
    shifts them all alike."""
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times.setdefault(name, []).append(1e3 * (time.perf_counter() - t0))


def in_thread(fn, pool):
    """fn run by the one thread of `pool`: the same thread every call, as a Dask worker's, so that
    its OpenMP team is made once (a new thread per call would time a new team of threads)."""
    return lambda: pool.submit(fn).result()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--datasets", default="20newsgroups,snap-email-enron,pbmc3k-cells")
    ap.add_argument("--metrics", default="cosine,manhattan")
    ap.add_argument("--k", type=int, default=15)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=4,
                    help="C++ processes, each followed by a round of the Python variants")
    ap.add_argument("--out")
    args = ap.parse_args()

    import spira
    from spira import _core
    from spira._input import as_csr

    cuda = args.device == "cuda"
    threads = os.cpu_count()
    pool = ThreadPoolExecutor(1)
    in_thread(lambda: None, pool)()
    rows = []
    for label, rel, transpose in DATASETS:
        if label not in args.datasets.split(","):
            continue
        path = os.path.join(args.data, rel)
        if not os.path.exists(path):
            print(f"skip {label}: {path} absent", file=sys.stderr)
            continue
        x = load_csr(path, transpose)
        with tempfile.TemporaryDirectory() as tmp:
            npz = os.path.join(tmp, "x.npz")
            sp.save_npz(npz, x)
            for metric in args.metrics.split(","):
                prepared = as_csr(x)
                core = lambda: _core.kneighbors(prepared, None, args.k, metric, 2.0,  # noqa: E731
                                                False, cuda, 0)
                public = lambda: spira.kneighbors(x, n_neighbors=args.k,  # noqa: E731
                                                  metric=metric, device=args.device)
                public()  # warm-up
                per_round = max(1, args.repeats // args.rounds)
                cmd = [args.bench, "--file", npz, "--backend", "cuda" if cuda else "host",
                       "--threads", str(threads), "--k", str(args.k), "--metrics", metric,
                       "--repeats", str(per_round), "--query-tile", "0", "--max-seconds", "600"]
                times, cpp_rounds = {}, []
                for _ in range(args.rounds):
                    run = subprocess.run(cmd, capture_output=True, text=True, check=True)
                    res = json.loads(run.stdout.strip().splitlines()[-1])
                    times.setdefault("cpp", []).extend(res["times_ms"])
                    cpp_rounds.append(res["median_ms"])
                    times_ms(dict(core_thread=in_thread(core, pool), core_main=core,
                                  public=public), per_round, times)
                rec = dict(dataset=label, rows=x.shape[0], nnz=int(x.nnz), metric=metric,
                           device=args.device,
                           **{name: float(np.median(t)) for name, t in times.items()},
                           cpp_rounds=cpp_rounds)
                rows.append(rec)
                print(json.dumps(rec), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(gpu=_core.gpu_names() if cuda else None, repeats=args.repeats,
                           rounds=args.rounds, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
