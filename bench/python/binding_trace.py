#!/usr/bin/env python3
"""A timeline of one k-NN call through the Python binding on CUDA, to see where the time over the
C++ call goes: torch.profiler (CUPTI) records every kernel, copy and CUDA runtime call of the
process, spira's included. For each dataset and metric, one call from the main thread (the binding
passes its Ctrl-C callback) and one from another thread (no callback, as in C++), each after a
warm-up, summarised as: wall time; GPU busy time by kind (kernels, host-to-device and
device-to-host copies, memsets); the host time before the first GPU activity and after the last;
the longest gaps between GPU activities; the slowest runtime calls. Prints one JSON line per call;
--out writes them all and keeps the Chrome traces beside it.

usage: bench/python/binding_trace.py [--data DIR] [--datasets pbmc3k-cells,20newsgroups]
                                     [--metrics cosine] [--k 15] [--out PATH]
"""
import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))
from datasets import DATASETS, load_csr  # noqa: E402

GPU_KINDS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}


def summarise(trace_path, wall_ms):
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    gpu = sorted((e for e in events if e.get("cat") in GPU_KINDS and "dur" in e),
                 key=lambda e: e["ts"])
    runtime = [e for e in events if e.get("cat") == "cuda_runtime" and "dur" in e]
    busy = {}
    for e in gpu:
        kind = GPU_KINDS[e["cat"]]
        if kind == "memcpy":
            kind = "memcpy " + ("HtoD" if "HtoD" in e["name"] else
                                "DtoH" if "DtoH" in e["name"] else "DtoD")
        busy[kind] = busy.get(kind, 0.0) + e["dur"] / 1e3
    calls = {}
    for e in runtime:
        c = calls.setdefault(e["name"], [0, 0.0])
        c[0] += 1
        c[1] += e["dur"] / 1e3
    gaps = []
    for a, b in zip(gpu, gpu[1:]):
        gaps.append((b["ts"] - (a["ts"] + a["dur"])) / 1e3)
    host = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime",)]
    start = min((e["ts"] for e in host), default=0)
    out = dict(wall_ms=wall_ms,
               gpu_busy_ms={k: round(v, 3) for k, v in sorted(busy.items())},
               gpu_span_ms=round((gpu[-1]["ts"] + gpu[-1]["dur"] - gpu[0]["ts"]) / 1e3, 3)
               if gpu else 0.0,
               first_gpu_after_first_runtime_call_ms=round((gpu[0]["ts"] - start) / 1e3, 3)
               if gpu and host else None,
               largest_gaps_ms=[round(g, 3) for g in sorted(gaps, reverse=True)[:8]],
               gaps_total_ms=round(sum(g for g in gaps if g > 0), 3),
               n_kernels=sum(1 for e in gpu if e["cat"] == "kernel"),
               runtime_calls={k: [v[0], round(v[1], 3)] for k, v in
                              sorted(calls.items(), key=lambda kv: -kv[1][1])[:10]})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--datasets", default="pbmc3k-cells,20newsgroups")
    ap.add_argument("--metrics", default="cosine")
    ap.add_argument("--k", type=int, default=15)
    ap.add_argument("--out")
    args = ap.parse_args()

    import torch
    from torch.profiler import ProfilerActivity, profile

    from spira import _core
    from spira._input import as_csr

    trace_dir = os.path.dirname(os.path.abspath(args.out)) if args.out else tempfile.mkdtemp()
    pool = ThreadPoolExecutor(1)
    torch.zeros(1, device="cuda")  # the profiler's own CUDA setup, outside the traces
    rows = []
    for label, rel, transpose in DATASETS:
        if label not in args.datasets.split(","):
            continue
        x = as_csr(load_csr(os.path.join(args.data, rel), transpose))
        for metric in args.metrics.split(","):
            def call():
                return _core.kneighbors(x, None, args.k, metric, 2.0, False, True, 0)

            for where, run in (("main", call), ("thread", lambda: pool.submit(call).result())):
                run()
                run()  # warm-up (and the thread's OpenMP team)
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                    t0 = time.perf_counter()
                    run()
                    wall = 1e3 * (time.perf_counter() - t0)
                path = os.path.join(trace_dir, f"trace-{label}-{metric}-{where}.json")
                prof.export_chrome_trace(path)
                rec = dict(dataset=label, metric=metric, thread=where, **summarise(path, wall))
                rows.append(rec)
                print(json.dumps(rec), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(gpu=_core.gpu_names(), rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
