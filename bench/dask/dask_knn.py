#!/usr/bin/env python3
"""Exact k-NN graph: single-process spira.kneighbors against spira.dask.kneighbors on a
LocalCluster of 1, 2, 4, ... worker processes (one thread each, OMP_NUM_THREADS=1 in every worker),
optionally one GPU worker. Writes bench/results/dask_knn-DATE.json and regenerates
docs/bench-dask.md from it (bench/dask/dask_knn_table.py).

The data is a synthetic sparse matrix (float32 CSR, uniform random columns and values) made of
--blocks row blocks, each generated from its own seed: the workers generate their blocks
themselves (the client never holds the matrix) and keep them in memory (persisted) before the
clock starts, as the single process holds its copy. Each timed run is the whole k-NN graph with
its results on the client: spira.kneighbors(X) against dask.compute(*spira.dask.kneighbors(Xd)).
Every distributed result is compared with the single-process one (indices equal, distances equal
as bytes on the host; on a GPU, the largest difference).

usage: bench/dask/dask_knn.py [--rows 40000] [--cols 20000] [--density 0.002] [--blocks 16]
                              [--workers 1,2,4,8,16] [--gpu] [--machine "NAME"] [--repeats 3]
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_block(b, rows, cols, density, seed):
    """Row block b of the synthetic matrix (float32 CSR), the same in every process."""
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng([seed, b])
    return sp.random(rows, cols, density=density, format="csr", random_state=rng,
                     dtype=np.float32)


def block_rows(n, blocks):
    base, extra = divmod(n, blocks)
    return [base + (1 if b < extra else 0) for b in range(blocks)]


def single(args, device):
    """Times spira.kneighbors in this process (OMP_NUM_THREADS set by the caller); prints JSON."""
    import numpy as np
    import scipy.sparse as sp

    import spira

    X = sp.vstack([make_block(b, r, args.cols, args.density, args.seed)
                   for b, r in enumerate(block_rows(args.rows, args.blocks))]).tocsr()
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        d, i = spira.kneighbors(X, n_neighbors=args.k, metric=args.metric, device=device)
        times.append(time.perf_counter() - t0)
    np.save(args.single_out + "-d.npy", d)
    np.save(args.single_out + "-i.npy", i)
    print(json.dumps(dict(times=times, nnz=int(X.nnz))))


def run_single(args, threads, device, out):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    cmd = [sys.executable, os.path.abspath(__file__), "--single", device, "--single-out", out]
    cmd += [f"--{k}={v}" for k, v in (("rows", args.rows), ("cols", args.cols),
                                      ("density", args.density), ("blocks", args.blocks),
                                      ("k", args.k), ("metric", args.metric),
                                      ("seed", args.seed), ("repeats", args.repeats))]
    res = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def distributed_times(args, cluster, device, want):
    """Median-able times of spira.dask.kneighbors on `cluster`, and whether every result equals
    the single-process one `want` (d, i)."""
    import dask
    import dask.array as da
    import numpy as np
    import scipy.sparse as sp
    from dask.highlevelgraph import HighLevelGraph
    from distributed import Client, wait

    import spira.dask

    rows = block_rows(args.rows, args.blocks)
    with Client(cluster) as client:
        name = f"synthetic-{args.seed}-{args.rows}-{args.cols}-{args.density}"
        dsk = {(name, b, 0): (make_block, b, r, args.cols, args.density, args.seed)
               for b, r in enumerate(rows)}
        meta = sp.csr_matrix((0, 0), dtype=np.float32)
        X = da.Array(HighLevelGraph.from_collections(name, dsk), name,
                     (tuple(rows), (args.cols,)), meta=meta)
        X = client.persist(X)
        wait(X)
        # A first run (not timed) imports spira in every worker.
        dask.compute(*spira.dask.kneighbors(X[: max(rows[0], args.k + 1)], n_neighbors=args.k,
                                            metric=args.metric, device=device))
        times, identical, max_diff = [], True, 0.0
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            d, i = dask.compute(*spira.dask.kneighbors(X, n_neighbors=args.k,
                                                       metric=args.metric, device=device))
            times.append(time.perf_counter() - t0)
            identical &= bool(np.array_equal(i, want[1]) and d.tobytes() == want[0].tobytes())
            max_diff = max(max_diff, float(np.abs(d - want[0]).max()))
    return times, identical, max_diff


def machine(label):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return dict(label=label, cpu=cpu, cores=os.cpu_count(), platform=platform.platform())


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=40000)
    ap.add_argument("--cols", type=int, default=20000)
    ap.add_argument("--density", type=float, default=0.002)
    ap.add_argument("--blocks", type=int, default=16, help="row blocks of the matrix")
    ap.add_argument("--k", type=int, default=15)
    ap.add_argument("--metric", default="cosine")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", default="1,2,4,8,16", help="comma-separated worker counts")
    ap.add_argument("--gpu", action="store_true",
                    help="also one GPU worker (dask_cuda.LocalCUDACluster when installed)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--machine", default="", help="a label for the machine in the table")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--single", help=argparse.SUPPRESS)
    ap.add_argument("--single-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.single:
        return single(args, args.single)

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        runs, nnz = measure(args, tmp)
    write(args, runs, nnz, (load_before, os.getloadavg()[0]))


def load(prefix):
    import numpy as np

    return np.load(prefix + "-d.npy"), np.load(prefix + "-i.npy")


def measure(args, tmp):
    """Every run of the benchmark: single process on 1 thread and on every core, then the
    clusters."""
    from distributed import LocalCluster

    runs = []
    s1 = run_single(args, 1, "cpu", os.path.join(tmp, "cpu1"))
    runs.append(dict(kind="single", device="cpu", threads=1, times=s1["times"]))
    print(json.dumps(runs[-1]), flush=True)
    want = load(os.path.join(tmp, "cpu1"))
    cores = os.cpu_count()
    sc = run_single(args, cores, "cpu", os.path.join(tmp, "cpuN"))
    runs.append(dict(kind="single", device="cpu", threads=cores, times=sc["times"]))
    print(json.dumps(runs[-1]), flush=True)
    for w in [int(x) for x in args.workers.split(",") if x]:
        with LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                          dashboard_address=None, env={"OMP_NUM_THREADS": "1"}) as cluster:
            times, identical, diff = distributed_times(args, cluster, "cpu", want)
        runs.append(dict(kind="dask", device="cpu", workers=w, times=times,
                         identical=identical, max_abs_diff=diff))
        print(json.dumps(runs[-1]), flush=True)
    if args.gpu:
        sg = run_single(args, cores, "cuda", os.path.join(tmp, "cuda"))
        runs.append(dict(kind="single", device="cuda", threads=cores, times=sg["times"]))
        print(json.dumps(runs[-1]), flush=True)
        want_gpu = load(os.path.join(tmp, "cuda"))
        try:
            from dask_cuda import LocalCUDACluster
            cluster = LocalCUDACluster(n_workers=1, threads_per_worker=1, dashboard_address=None)
        except ImportError:
            cluster = LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None)
        with cluster:
            times, identical, diff = distributed_times(args, cluster, "cuda", want_gpu)
        runs.append(dict(kind="dask", device="cuda", workers=1, times=times,
                         identical=identical, max_abs_diff=diff,
                         cluster=type(cluster).__name__))
        print(json.dumps(runs[-1]), flush=True)
    return runs, s1["nnz"]


def write(args, runs, nnz, load):
    """The JSON result and its table."""
    today = datetime.date.today().isoformat()
    import dask
    import distributed

    import spira

    result = dict(benchmark="dask_knn", date=today, machine=dict(machine(args.machine),
                                                                 load_average=load),
                  versions=dict(spira=spira.__version__, dask=dask.__version__,
                                distributed=distributed.__version__),
                  params=dict(rows=args.rows, cols=args.cols, density=args.density,
                              nnz=nnz, blocks=args.blocks, k=args.k, metric=args.metric,
                              seed=args.seed, repeats=args.repeats),
                  command=shlex.join([os.path.relpath(os.path.abspath(__file__), ROOT)]
                                     + sys.argv[1:]),
                  runs=runs)
    out_json = os.path.join(args.out, f"dask_knn-{today}.json")
    with open(out_json, "w") as f:
        json.dump(result, f, indent=1)
    table = os.path.join(ROOT, "bench", "dask", "dask_knn_table.py")
    subprocess.run([sys.executable, table, out_json], check=True)
    print(f"wrote {out_json}")


if __name__ == "__main__":
    main()
