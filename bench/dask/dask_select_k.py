#!/usr/bin/env python3
"""Top-k of one long vector: single-process spira.select_k against spira.dask.select_k on a
LocalCluster of 1, 2, 4, ... worker processes (one thread each, OMP_NUM_THREADS=1 in every
worker), with and without the threshold pass (prune). Writes a JSON result (default
bench/results/dask_select_k-DATE.json; pass --out elsewhere for a smoke run).

The vector (float32, uniform in [0, 1), or small integers with --ties) is made of --chunks
chunks, each generated from its own seed: the workers generate their chunks and keep them in
memory (persisted) before the clock starts, as the single process holds its copy. Each timed run
is the whole selection with its results on the client. Every distributed result is compared with
the single-process one (indices equal, values equal as bytes). Per run it records where the time
went (task stream: threshold pass, chunk selections, merges) and, from one extra run of the
chunk tasks, the candidates the chunks handed on and the elements they selected among.

usage: bench/dask/dask_select_k.py [--log2n 24] [--k 16,1024,65536] [--chunks 16]
                                   [--workers 1,2] [--gpu] [--repeats 3] [--out PATH]
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_chunk(block, c, size, seed, ties):
    """Chunk c of the vector (float32), the same in every process."""
    import numpy as np

    rng = np.random.default_rng([seed, c])
    if ties:
        return rng.integers(0, 1000, size).astype(np.float32)
    return rng.random(size, dtype=np.float32)


def stage_of(key):
    for stage in ("delegate", "threshold", "candidates", "merge", "result"):
        if f"-{stage}" in str(key):
            return stage
    return "other"


def vector(args, n, chunk):
    import dask.array as da
    import numpy as np

    blocks = da.zeros(n, chunks=chunk, dtype=np.float32)
    return blocks.map_blocks(lambda b, block_info=None: make_chunk(
        b, block_info[0]["chunk-location"][0], b.size, args.seed, args.ties), dtype=np.float32)


def run_cluster(args, n, workers, gpu, want):
    import dask
    import distributed
    import numpy as np

    import spira.dask

    if gpu:
        from dask_cuda import LocalCUDACluster

        cluster = LocalCUDACluster(n_workers=1, threads_per_worker=1, dashboard_address=None)
    else:
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                           processes=True, dashboard_address=None,
                                           memory_limit=0)
    rows = []
    with cluster, distributed.Client(cluster) as client:
        x = vector(args, n, n // args.chunks).persist()
        distributed.wait(x)
        # CPU workers select on their CPU even where spira sees a GPU (the GPU machine).
        device = "cuda" if gpu else "cpu"
        dask.compute(*spira.dask.select_k(x, args.k[0], device=device))  # warm-up: imports
        for k in args.k:
            for prune in (True, False):
                times, stages = [], []
                for _ in range(args.repeats):
                    v, i = spira.dask.select_k(x, k, prune=prune, device=device)
                    with distributed.get_task_stream(client) as ts:
                        t0 = time.perf_counter()
                        got = dask.compute(v, i)
                        times.append(time.perf_counter() - t0)
                    per = {}
                    for t in ts.data:
                        s = stage_of(t["key"])
                        for ss in t["startstops"]:
                            if ss["action"] == "compute":
                                per[s] = per.get(s, 0.0) + ss["stop"] - ss["start"]
                    stages.append(per)
                v0, i0 = want[k]
                same = bool((got[1] == i0).all() and got[0].tobytes() == v0.tobytes())
                keys = [key for key in v.dask.keys() if "-candidates" in str(key)]
                parts = client.get(dict(v.dask), keys, sync=True)
                sent = sum(int((p[1] >= 0).sum()) for p in parts)
                read = sum(int(p[2]) for p in parts)
                med = statistics.median(times)
                at = min(range(len(times)), key=lambda r: abs(times[r] - med))
                rows.append(dict(n=n, k=k, workers=workers, gpu=gpu, prune=prune, times=times,
                                 median=med, stages=stages[at],
                                 candidates_sent=sent, elements_selected=read,
                                 identical=same))
                print(json.dumps({key: rows[-1][key] for key in
                                  ("n", "k", "workers", "gpu", "prune", "median",
                                   "candidates_sent", "elements_selected", "identical")}),
                      flush=True)
                np.testing.assert_(same, "distributed result differs")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", default="24")
    ap.add_argument("--k", default="16,1024,65536")
    ap.add_argument("--chunks", type=int, default=16)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--gpu", action="store_true", help="also one GPU worker (dask-cuda)")
    ap.add_argument("--ties", action="store_true", help="small integers: many ties")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--machine", default=platform.node())
    ap.add_argument("--out", default=os.path.join(
        ROOT, "bench", "results", f"dask_select_k-{datetime.date.today()}.json"))
    args = ap.parse_args()
    args.k = [int(k) for k in args.k.split(",")]
    os.environ["OMP_NUM_THREADS"] = "1"  # the single process on one core, as each worker
    import dask
    import distributed
    import numpy as np

    import spira

    result = dict(machine=args.machine, cores=os.cpu_count(), argv=sys.argv[1:],
                  versions=dict(spira=spira.__version__, dask=dask.__version__,
                                distributed=distributed.__version__, numpy=np.__version__),
                  rows=[])
    for log2n in (int(s) for s in args.log2n.split(",")):
        n = 1 << log2n
        whole = np.concatenate([make_chunk(None, c, n // args.chunks, args.seed, args.ties)
                                for c in range(args.chunks)])
        want = {}
        for k in args.k:
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                want[k] = spira.select_k(whole, k, device="cpu")
                times.append(time.perf_counter() - t0)
            result["rows"].append(dict(n=n, k=k, workers=0, gpu=False, prune=None,
                                       times=times, median=statistics.median(times)))
            print(json.dumps(dict(n=n, k=k, single=statistics.median(times))), flush=True)
        del whole
        for w in (int(s) for s in args.workers.split(",")):
            result["rows"] += run_cluster(args, n, w, False, want)
        if args.gpu:
            result["rows"] += run_cluster(args, n, 1, True, want)
        with open(args.out, "w") as f:  # what is done so far survives a time limit
            json.dump(result, f, indent=1)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
