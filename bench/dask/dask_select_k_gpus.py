#!/usr/bin/env python3
"""Top-k of one long float32 vector on several GPUs: spira.dask.select_k with one Dask worker per
GPU (dask_cuda.LocalCUDACluster), the chunks in GPU memory (CuPy), against spira.select_k of the
whole vector on one GPU.

The vector is --chunks chunks of uniform float32 values in [0, 1) (many ties: 2^23 values per
binade), chunk c drawn on the GPU from its own seed, so every run and every GPU count sees the same
vector. The single-GPU reference runs first, in a subprocess on the first GPU (the whole vector in
one CuPy array; a size that does not fit is recorded as such). Then for each GPU count the workers
draw their chunks and hold them (persisted, in GPU memory) before the clock starts; each timed run
is the whole selection with its results on the client, with and without the threshold pass
(prune). Results are compared with the single-GPU ones (indices equal, values equal as bytes).
Where the time goes comes from Dask's task stream: compute time by stage (delegates and threshold,
the chunks' local selections, the merges), transfers between workers, the rest of the wall time
(scheduler, client).

usage: bench/dask/dask_select_k_gpus.py [--log2n 30,31,32,33] [--k 16,2048,262144]
                                        [--chunks 16] [--gpus 1,2,4] [--repeats 2] [--out DIR]
Writes DIR/dask_select_k_gpus-DATE.json (after every case: a time limit keeps what was done).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import breakdown, result_header  # noqa: E402


def make_chunk(c, size, seed):
    """Chunk c of the vector, drawn on the current GPU (the same bytes in every process)."""
    import cupy

    return cupy.random.RandomState(seed * 1_000_003 + c).random_sample(size, dtype=cupy.float32)


def chunk_sizes(n, chunks):
    base, extra = divmod(n, chunks)
    return [base + (1 if c < extra else 0) for c in range(chunks)]


def single(args):
    """spira.select_k of the whole vector on this process's GPU, for every k; prints JSON."""
    import cupy
    import numpy as np

    import spira

    n = 1 << args.log2n_one
    out = dict(n=n, k={})
    try:
        whole = cupy.empty(n, dtype=cupy.float32)
        at = 0
        for c, size in enumerate(chunk_sizes(n, args.chunks)):
            whole[at : at + size] = make_chunk(c, size, args.seed)
            at += size
        spira.select_k(whole[: 1 << 20], 16)  # not timed: CUDA's start-up
        for k in args.k:
            times = []
            for _ in range(args.repeats):
                cupy.cuda.Device().synchronize()
                t0 = time.perf_counter()
                v, i = spira.select_k(whole, k)
                v, i = v.get(), i.get()  # results on the host, as the distributed ones
                times.append(time.perf_counter() - t0)
            np.save(f"{args.single_out}-{k}-v.npy", v)
            np.save(f"{args.single_out}-{k}-i.npy", i)
            out["k"][k] = times
    except (MemoryError, cupy.cuda.memory.OutOfMemoryError) as e:
        out["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out))


def run_single(args, log2n, ref):
    cmd = [sys.executable, os.path.abspath(__file__), "--single-out", ref,
           f"--log2n-one={log2n}", f"--chunks={args.chunks}", f"--seed={args.seed}",
           f"--repeats={args.repeats}", "--k=" + ",".join(map(str, args.k))]
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=os.environ.get("CUDA_VISIBLE_DEVICES", "0")
               .split(",")[0])
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode:
        return dict(error=f"exit {res.returncode}: {res.stderr.strip()[-800:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


STAGES = ("delegates", "delegate-merge", "threshold", "candidates", "merge", "result")


def stage_of(name):
    """The stage of a spira.dask.select_k task (by its key name)."""
    return next((s for s in STAGES if name.startswith("spira-select-k-") and f"-{s}" in name),
                "other")


def run_cluster(args, sizes_log2, gpus, wants, cases):
    """Every vector size on one cluster of ``gpus`` workers; appends to each case."""
    import cupy
    import dask
    import dask.array as da
    import numpy as np
    from dask.highlevelgraph import HighLevelGraph
    from dask_cuda import LocalCUDACluster
    from distributed import Client, get_task_stream, wait

    import spira.dask

    with LocalCUDACluster(n_workers=gpus, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        for log2n, want, case in zip(sizes_log2, wants, cases):
            n = 1 << log2n
            sizes = chunk_sizes(n, args.chunks)
            name = f"uniform-{args.seed}-{n}-{args.chunks}"
            dsk = {(name, c): (make_chunk, c, size, args.seed) for c, size in enumerate(sizes)}
            x = da.Array(HighLevelGraph.from_collections(name, dsk), name, (tuple(sizes),),
                         meta=cupy.empty(0, dtype=cupy.float32))
            out = dict(gpus=gpus, cluster="dask_cuda.LocalCUDACluster", runs=[])
            t0 = time.perf_counter()
            x = client.persist(x)
            wait(x)
            out["generate_s"] = time.perf_counter() - t0
            per_worker = {}
            for holders in client.who_has(x).values():
                for w in holders:
                    per_worker[w] = per_worker.get(w, 0) + 1
            out["chunks_per_worker"] = sorted(per_worker.values())
            dask.compute(*spira.dask.select_k(x, 16))  # not timed: imports, CUDA start-up
            for k in args.k:
                for prune in (True, False):
                    runs = []
                    for _ in range(args.repeats):
                        with get_task_stream(client) as ts:
                            t0 = time.perf_counter()
                            v, i = dask.compute(*spira.dask.select_k(x, k, prune=prune))
                            wall = time.perf_counter() - t0
                        runs.append(breakdown(ts.data, wall, stage_of))
                    med = statistics.median(r["wall_s"] for r in runs)
                    row = dict(k=k, prune=prune, times=[r["wall_s"] for r in runs], median=med,
                               breakdown=min(runs, key=lambda r: abs(r["wall_s"] - med)))
                    if k in want:
                        row["identical"] = bool(np.array_equal(i, want[k][1]) and
                                                v.tobytes() == want[k][0].tobytes())
                    out["runs"].append(row)
                    print(json.dumps(dict(n=n, gpus=gpus, k=k, prune=prune, median=med,
                                          identical=row.get("identical"))), flush=True)
            case["distributed"].append(out)
            del x


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log2n", default="30,31,32,33")
    ap.add_argument("--k", default="16,2048,262144")
    ap.add_argument("--chunks", type=int, default=16)
    ap.add_argument("--gpus", default="1,2,4")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--single-out", help=argparse.SUPPRESS)
    ap.add_argument("--log2n-one", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.k = [int(k) for k in args.k.split(",") if k]
    if args.single_out:
        return single(args)

    import tempfile

    import numpy as np

    result = result_header("dask_select_k_gpus", dict(chunks=args.chunks, k=args.k, seed=args.seed,
                                                      repeats=args.repeats, dtype="float32"))
    gpu_names = result["machine"]["gpus"]
    out_json = os.path.join(args.out, f"dask_select_k_gpus-{result['date']}.json")
    sizes_log2 = [int(s) for s in args.log2n.split(",") if s]
    with tempfile.TemporaryDirectory() as tmp:
        wants = []
        for log2n in sizes_log2:  # first, while no worker holds GPU memory
            s = run_single(args, log2n, os.path.join(tmp, f"single-{log2n}"))
            result["cases"].append(dict(n=1 << log2n, single_gpu=s, distributed=[]))
            print(json.dumps(dict(n=1 << log2n, single=s)), flush=True)
            wants.append({int(k): (np.load(os.path.join(tmp, f"single-{log2n}-{k}-v.npy")),
                                   np.load(os.path.join(tmp, f"single-{log2n}-{k}-i.npy")))
                          for k in s.get("k", {})})
    for g in [int(x) for x in args.gpus.split(",") if x]:
        if g <= len(gpu_names):
            run_cluster(args, sizes_log2, g, wants, result["cases"])
            with open(out_json, "w") as f:  # what is done so far survives a time limit
                json.dump(result, f, indent=1)
    with open(out_json, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {out_json}")


if __name__ == "__main__":
    main()
