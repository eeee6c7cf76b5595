#!/usr/bin/env python3
"""Full self-k-NN graphs through spira's Python API, against scikit-learn's brute force and
pynndescent, and the Python layer's cost over the C++ call.

For each shared dataset (../shared/data, absent ones skipped) and metric (k = 15, float32 CSR):
  spira         spira.kneighbors(X, n_neighbors=k, metric=m, device=D): the public function, from
                the user's scipy CSR to the (distances, indices) arrays
  spira_core    spira._core.kneighbors on the arrays the package prepared: the binding alone
  spira_cpp     spira::knn_graph in-process in C++ (bench_knn, --bench; optional): the same
                matrix (saved by the Python side as a SciPy .npz), the same threads
  spira_cpp_tiles  the same with knn_params::query_tile set to the query tile the binding's
                progress callback (always passed: it lets Ctrl-C through) leads the library to,
                max(ceil(rows / 20), 256) rows; host only (on CUDA a tile override selects the
                tiled algorithm, the binding's call stays fused)
  sklearn       NearestNeighbors(algorithm="brute", n_jobs=threads).kneighbors(X), capped like
                bench/knn/knn.py: projected from the first --probe-rows rows past --peer-limit s
  pynndescent   NNDescent(X, n_neighbors=k, metric=m).neighbor_graph (approximate: its recall is
                reported), after a warm-up that compiles its numba code
The spira variants run interleaved (C++, C++ tiles, public, core, C++, ...) so that a busy machine slows
them alike. Recall and distance agreement of each peer are against spira's graph (bench/knn/knn.py's
compare: an index tying with spira's k-th distance counts).

usage:
  host (2 cores):  OMP_WAIT_POLICY=passive bench/python/python_knn.py \\
                     --bench BUILD/bench/bench_knn --device cpu --threads 2
  GPU machine:     bench/python/python_knn.py --bench BUILD/bench/bench_knn --device cuda
                   (scikit-learn and pynndescent on all cores)
Writes bench/results/python_knn-{host,gpu}-DATE.json; bench/python/python_knn_table.py turns it into
docs/bench-python.md and docs/bench-python.png.
"""
import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))  # datasets.py
sys.path.insert(0, os.path.join(ROOT, "bench", "knn"))  # knn.py: capped peers, recall

from datasets import DATASETS, load_csr
from knn import compare, peer_record, run_capped, timed_runs


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--threads", type=int, default=0,
                   help="threads of every tool (0: all cores); set before the libraries load")
    p.add_argument("--bench", help="bench_knn (spira's C++ k-NN benchmark) for spira_cpp")
    p.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    p.add_argument("--datasets",
                   help="comma-separated labels (default: all of bench/common/datasets.py)")
    p.add_argument("--metrics", default="cosine,manhattan")
    p.add_argument("--k", type=int, default=15)
    p.add_argument("--repeats", type=int, default=3, help="timed calls of each spira variant")
    p.add_argument("--max-seconds", type=float, default=60,
                   help="stop repeating a spira variant past this many seconds")
    p.add_argument("--peer-limit", type=float, default=60, help="seconds a peer may take a case")
    p.add_argument("--probe-rows", type=int, default=2048)
    p.add_argument("--no-pynndescent", action="store_true")
    p.add_argument("--out", help="default: bench/results/python_knn-{host,gpu}-DATE.json")
    return p.parse_args()


def machine_record(args, threads):
    import scipy
    import sklearn

    import spira

    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    rec = dict(date=datetime.date.today().isoformat(), device=args.device, cpu=cpu,
               cores=os.cpu_count(), threads=threads, platform=platform.platform(),
               python=platform.python_version(), numpy=np.__version__, scipy=scipy.__version__,
               sklearn=sklearn.__version__, spira=spira.__version__, k=args.k,
               repeats=args.repeats, peer_limit_s=args.peer_limit, probe_rows=args.probe_rows,
               load_average=os.getloadavg()[0], omp_wait_policy=os.environ.get("OMP_WAIT_POLICY"))
    try:
        rec["pynndescent"] = importlib.metadata.version("pynndescent")
    except importlib.metadata.PackageNotFoundError:
        rec["pynndescent"] = "unavailable"
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        rec["spira_revision"] = rev + (" + uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError) as e:
        rec["spira_revision"] = f"unknown: {type(e).__name__}"
    if args.device == "cuda":
        from spira import _core

        rec["gpu"] = "; ".join(_core.gpu_names())
    return rec


def progress_tile(rows):
    """The query tile of a host knn_graph call with a progress callback (the binding's), when the
    memory budget allows more: knn_policy::progress_steps = 20 reports, at least
    knn_policy::progress_min_rows = 256 rows each (spira/detail/knn_policy.hpp)."""
    return max(-(-rows // 20), 256)


def cpp_call(args, path, metric, threads, query_tile=0):
    """One timed spira::knn_graph call in a bench_knn process (after its own warm-up): seconds."""
    cmd = [args.bench, "--file", path, "--backend", "cuda" if args.device == "cuda" else "host",
           "--threads", str(threads), "--k", str(args.k), "--metrics", metric, "--repeats", "1",
           "--query-tile", str(query_tile)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"bench_knn failed ({run.returncode}): {run.stderr.strip()}")
    rec = json.loads(run.stdout.strip().splitlines()[-1])
    if rec["error"]:
        raise RuntimeError(rec["error"])
    return rec["median_ms"] / 1e3


def spira_variants(args, x, path, label, metric, threads):
    """The interleaved spira runs; returns their records and spira's graph (the reference)."""
    import spira
    from spira import _core
    from spira._input import as_csr

    cuda = args.device == "cuda"
    cpp = () if not args.bench else ("spira_cpp",) if cuda else ("spira_cpp", "spira_cpp_tiles")
    recs = {name: peer_record(name, label, x, args.k, metric, threads)
            for name in ("spira", "spira_core") + cpp}
    spira.kneighbors(x[:256], n_neighbors=min(args.k, 256), metric=metric, device=args.device)
    prepared = as_csr(x)
    calls = {
        "spira": lambda: spira.kneighbors(x, n_neighbors=args.k, metric=metric,
                                          device=args.device),
        "spira_core": lambda: _core.kneighbors(prepared, None, args.k, metric, 2.0, False, cuda,
                                               0),
    }
    if args.bench:
        calls["spira_cpp"] = lambda: cpp_call(args, path, metric, threads)
        tile = progress_tile(x.shape[0])
        calls["spira_cpp_tiles"] = lambda: cpp_call(args, path, metric, threads, tile)
    graph = None
    start = time.perf_counter()
    for r in range(args.repeats):
        for name in ("spira_cpp", "spira_cpp_tiles", "spira", "spira_core"):
            if name not in recs:
                continue
            try:
                if name.startswith("spira_cpp"):
                    seconds = calls[name]()
                else:
                    seconds, _, result = timed_runs(calls[name], 0, 1)
                    if name == "spira":
                        graph = result
                recs[name]["times_ms"].append(1e3 * seconds)
            except Exception as e:  # noqa: BLE001 - a failure is a result
                recs[name]["error"] = f"{type(e).__name__}: {e}"
        if time.perf_counter() - start > args.max_seconds:
            break
    for rec in recs.values():
        if rec["times_ms"]:
            rec["median_ms"] = float(np.median(rec["times_ms"]))
            rec["measured_rows"] = x.shape[0]
    return list(recs.values()), graph


def sklearn_peer(args, x, label, metric, threads, ref):
    from sklearn.neighbors import NearestNeighbors

    rec = peer_record("sklearn", label, x, args.k, metric, threads)
    try:
        nn = NearestNeighbors(n_neighbors=args.k, algorithm="brute", metric=metric,
                              n_jobs=threads or -1).fit(x)

        def run_rows(r):
            dist, idx = nn.kneighbors(x[:r])
            return idx, dist

        run_capped(rec, x.shape[0], args.probe_rows, args.peer_limit, args.repeats, run_rows, ref)
    except Exception as e:  # noqa: BLE001
        rec["error"] = f"{type(e).__name__}: {e}"
    return rec


def pynndescent_peer(args, x, label, metric, threads, ref):
    """pynndescent builds the whole graph at once: no projection; one timed run past the limit."""
    rec = peer_record("pynndescent", label, x, args.k, metric, threads)
    try:
        from pynndescent import NNDescent

        t0 = time.perf_counter()  # warm-up: numba compiles for this metric and sparse input
        NNDescent(x[:300], n_neighbors=min(args.k, 299), metric=metric, random_state=0,
                  n_jobs=threads or -1).neighbor_graph
        rec["warmup_ms"] = 1e3 * (time.perf_counter() - t0)

        def run():
            index = NNDescent(x, n_neighbors=args.k, metric=metric, random_state=0,
                              n_jobs=threads or -1)
            return index.neighbor_graph

        med, times, (idx, dist) = timed_runs(run, args.peer_limit, args.repeats)
        rec.update(median_ms=1e3 * med, times_ms=[1e3 * t for t in times],
                   measured_rows=x.shape[0])
        if ref is not None:
            rec["recall_vs_spira"], rec["max_dist_diff"] = compare(ref[0], ref[1], idx, dist)
    except Exception as e:  # noqa: BLE001
        rec["error"] = f"{type(e).__name__}: {e}"
    return rec


def main():
    args = parse_args()
    if args.threads:
        for var in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "MKL_NUM_THREADS"):
            os.environ.setdefault(var, str(args.threads))
    from spira import _core

    threads = args.threads or (os.cpu_count() if args.device == "cuda" else _core.host_threads())
    kind = "gpu" if args.device == "cuda" else "host"
    out_path = args.out or os.path.join(
        ROOT, "bench", "results", f"python_knn-{kind}-{datetime.date.today().isoformat()}.json")
    wanted = set(args.datasets.split(",")) if args.datasets else None
    result = dict(machine=machine_record(args, threads), results=[], skipped=[])
    print(json.dumps(result["machine"]), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for label, rel, transpose in DATASETS:
            if wanted is not None and label not in wanted:
                continue
            src = os.path.join(args.data, rel)
            if not os.path.exists(src):
                result["skipped"].append(f"{label}: {src} is absent")
                continue
            # The matrix as the Python side has it, saved for bench_knn: both time the same data.
            x = load_csr(src, transpose)
            path = os.path.join(tmp, label + ".npz")
            if args.bench:
                sp.save_npz(path, x, compressed=False)
            for metric in args.metrics.split(","):
                recs, graph = spira_variants(args, x, path, label, metric, threads)
                ref = None if graph is None else (graph[1], graph[0])  # (indices, distances)
                recs.append(sklearn_peer(args, x, label, metric, threads, ref))
                if not args.no_pynndescent:
                    recs.append(pynndescent_peer(args, x, label, metric, threads, ref))
                for rec in recs:
                    print(json.dumps(rec), flush=True)
                result["results"].extend(recs)
                with open(out_path, "w") as f:  # after every case: a cut-off run keeps its part
                    json.dump(result, f, indent=1)
    print(f"wrote {os.path.relpath(out_path)}", file=sys.stderr)


if __name__ == "__main__":
    main()
