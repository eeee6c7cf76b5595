#!/usr/bin/env python3
"""Exact k-NN graph on several GPUs: spira.dask.kneighbors with one Dask worker per GPU
(dask_cuda.LocalCUDACluster) against spira.kneighbors on one GPU, on synthetic sets of the SEC
EDGAR character-3-gram shape (858,000 columns, about 6 entries per row, at most 51, column
popularity Zipf(0.6): the shape of bench/synthetic.hpp's "sec-edgar").

For every row count: the single-GPU graph (spira.kneighbors in a subprocess, the matrix in host
memory), then the same graph on 1, 2, ... GPUs: the workers generate their row blocks themselves
and hold them (persisted) before the clock starts; each timed run is the whole graph with its
results on the client. The distributed graph is compared with the single-GPU one (indices equal,
distances: the CUDA engine's sums use atomics, so a distance may differ in its last bit between
runs, docs/cuda-engine.md). Where the time goes comes from Dask's task stream: the tasks' compute
time by kind (partial k-NN of a block pair, merge, result), the transfers between workers, and the
rest of the wall time (scheduler, client, idle).

usage: bench/dask/dask_knn_gpus.py [--rows 663000,2000000] [--blocks 16] [--gpus 1,2] [--k 15]
                                   [--metric cosine] [--repeats 2] [--out DIR]
Writes DIR/dask_knn_gpus-DATE.json.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import breakdown, result_header  # noqa: E402
DEVICE = "cuda"  # every run is on GPUs
COLS, MEAN_DEGREE, MAX_DEGREE, ZIPF_S = 858_000, 0.000007 * 858_000, 51, 0.6


def edgar_block(b, rows, seed):
    """Row block b (float32 CSR, `rows` rows) of the synthetic SEC EDGAR shape: Pareto(1.5) row
    degrees clamped to [1, 51] with the set's mean degree, columns drawn from Zipf(0.6) over a
    fixed random permutation (repeats in a row summed away), tf-idf-like values in (0, 1]."""
    import numpy as np
    import scipy.sparse as sp

    perm = np.random.default_rng([seed, 0]).permutation(COLS)
    weights = 1.0 / np.arange(1, COLS + 1) ** ZIPF_S
    cdf = np.cumsum(weights) / weights.sum()
    rng = np.random.default_rng([seed, 1, b])
    xm = 2.55  # the clamped mean is then 6.0, the set's mean degree
    deg = np.clip(np.floor(xm / rng.random(rows) ** (1 / 1.5)), 1, MAX_DEGREE).astype(np.int64)
    nnz = int(deg.sum())
    cols = perm[np.searchsorted(cdf, rng.random(nnz), side="right").clip(0, COLS - 1)]
    indptr = np.concatenate([[0], np.cumsum(deg)])
    vals = rng.uniform(0.05, 1.0, nnz).astype(np.float32)
    m = sp.csr_matrix((vals, cols.astype(np.int32), indptr), shape=(rows, COLS))
    m.sum_duplicates()
    return m


def block_rows(n, blocks):
    base, extra = divmod(n, blocks)
    return [base + (1 if b < extra else 0) for b in range(blocks)]


def single(args):
    """spira.kneighbors of the whole matrix on GPU 0 in this process; prints JSON."""
    import numpy as np
    import scipy.sparse as sp

    import spira

    X = sp.vstack([edgar_block(b, r, args.seed)
                   for b, r in enumerate(block_rows(args.rows_one, args.blocks))]).tocsr()
    # Not timed: CUDA's start-up, on the first rows.
    spira.kneighbors(X[: 4 * args.k], n_neighbors=args.k, metric=args.metric, device=DEVICE)
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        d, i = spira.kneighbors(X, n_neighbors=args.k, metric=args.metric, device=DEVICE)
        times.append(time.perf_counter() - t0)
    np.save(args.single_out + "-d.npy", d)
    np.save(args.single_out + "-i.npy", i)
    print(json.dumps(dict(times=times, nnz=int(X.nnz))))


def run_single(args, rows, out):
    cmd = [sys.executable, os.path.abspath(__file__), "--single-out", out, f"--rows-one={rows}",
           f"--blocks={args.blocks}", f"--k={args.k}", f"--metric={args.metric}",
           f"--seed={args.seed}", f"--repeats={args.repeats}"]
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=os.environ.get("CUDA_VISIBLE_DEVICES", "0")
               .split(",")[0])
    res = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return json.loads(res.stdout.strip().splitlines()[-1])


def kind_of(name):
    """A task's kind: spira.dask's part / merge / result, or the key's prefix."""
    from dask.utils import key_split

    kind = key_split(name)
    if name.rsplit("-", 1)[-1] in ("part", "merge", "result"):  # spira.dask's task kinds
        kind += "-" + name.rsplit("-", 1)[-1]
    return kind


def run_distributed(args, rows, gpus, want):
    import dask
    import dask.array as da
    import numpy as np
    import scipy.sparse as sp
    from dask.highlevelgraph import HighLevelGraph
    from dask_cuda import LocalCUDACluster
    from distributed import Client, get_task_stream, wait

    import spira.dask

    sizes = block_rows(rows, args.blocks)
    out = dict(gpus=gpus, cluster="dask_cuda.LocalCUDACluster", times=[], runs=[])
    with LocalCUDACluster(n_workers=gpus, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        name = f"edgar-{args.seed}-{rows}-{args.blocks}"
        dsk = {(name, b, 0): (edgar_block, b, r, args.seed) for b, r in enumerate(sizes)}
        X = da.Array(HighLevelGraph.from_collections(name, dsk), name, (tuple(sizes), (COLS,)),
                     meta=sp.csr_matrix((0, 0), dtype=np.float32))
        X = client.persist(X)
        wait(X)
        # Not timed: imports spira and starts CUDA in every worker.
        dask.compute(*spira.dask.kneighbors(X[: sizes[0]], n_neighbors=args.k, metric=args.metric,
                                            device=DEVICE))
        for _ in range(args.repeats):
            with get_task_stream(client) as ts:
                t0 = time.perf_counter()
                d, i = dask.compute(*spira.dask.kneighbors(X, n_neighbors=args.k,
                                                           metric=args.metric, device=DEVICE))
                wall = time.perf_counter() - t0
            out["times"].append(wall)
            same_i = i == want[1]
            out["runs"].append(dict(
                breakdown(ts.data, wall, kind_of),
                indices_equal_fraction=float(same_i.mean()),
                distances_equal_fraction=float((d == want[0]).mean()),
                max_abs_diff=float(np.abs(d - want[0]).max()),
                identical=bool(same_i.all() and d.tobytes() == want[0].tobytes())))
            print(json.dumps(dict(rows=rows, gpus=gpus, wall=wall, **{
                k: v for k, v in out["runs"][-1].items() if k != "compute_s"})), flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="663000,2000000")
    ap.add_argument("--blocks", type=int, default=16)
    ap.add_argument("--gpus", default="1,2")
    ap.add_argument("--k", type=int, default=15)
    ap.add_argument("--metric", default="cosine")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--single-out", help=argparse.SUPPRESS)
    ap.add_argument("--rows-one", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.single_out:
        return single(args)

    import numpy as np

    result = result_header("dask_knn_gpus", dict(cols=COLS, blocks=args.blocks, k=args.k,
                                                 metric=args.metric, seed=args.seed,
                                                 repeats=args.repeats))
    gpu_names = result["machine"]["gpus"]
    out_json = os.path.join(args.out, f"dask_knn_gpus-{result['date']}.json")
    with tempfile.TemporaryDirectory() as tmp:
        for rows in [int(r) for r in args.rows.split(",") if r]:
            ref = os.path.join(tmp, f"single-{rows}")
            s = run_single(args, rows, ref)
            case = dict(rows=rows, nnz=s["nnz"], single_gpu_times=s["times"], distributed=[])
            print(json.dumps(dict(rows=rows, single=s["times"])), flush=True)
            want = (np.load(ref + "-d.npy"), np.load(ref + "-i.npy"))
            for g in [int(x) for x in args.gpus.split(",") if x]:
                if g > len(gpu_names):
                    continue
                case["distributed"].append(run_distributed(args, rows, g, want))
                with open(out_json, "w") as f:  # what is done so far survives a time limit
                    json.dump(dict(result, cases=result["cases"] + [case]), f, indent=1)
            result["cases"].append(case)
    with open(out_json, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {out_json}")


if __name__ == "__main__":
    main()
