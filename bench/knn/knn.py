#!/usr/bin/env python3
"""Full self-k-NN graphs, side by side in one run: spira::knn_graph (bench_knn, in-process timing)
against RAFT 25.10's sparse brute-force k-NN (on the GPU), scikit-learn's brute-force
NearestNeighbors and, on the GPU, cuSPARSE (CuPy A @ B.T) with torch.topk. Every dataset of
../shared/data and synthetic Table 2 shapes (bench/common/synthetic.hpp), k = 15, cosine and
manhattan by default; with --words also short strings as character 2- to 4-grams built as a new
user would with scikit-learn (bench/common/datasets.py: char_ngram_words).

Every tool gets the same float32 CSR: bench_knn writes the matrix it benchmarks to an .npz that the
peers load. Peers are capped in time: each first runs on the first --probe-rows query rows against
the whole index; when that projects (linearly in the query rows) above --peer-limit seconds, the
projection is reported with "extrapolated": true and the rows actually run in "measured_rows"
instead of the full run. Failures of any tool are results ("error"), never dropped. Each peer's
neighbours are compared with spira's on the rows it computed: "recall_vs_spira" (shared indices /
k, where an index that ties with spira's k-th distance also counts) and "max_dist_diff" (largest
difference between the two sorted distance lists).

spira on the GPU is timed twice: host CSR in, host graph out ("median_ms", copies included) and,
with bench_knn --resident (unless --no-resident), device CSR in, device graph out
("resident_median_ms"), with the peak device memory of each ("peak_device_bytes",
"resident_peak_device_bytes"; bench/knn/knn_gpu.cpp says how it is measured).

RAFT (--peers raft, program --raft or $SPIRA_RAFT_PEER: raft_anchor, built from
../shared/tools/peers/raft_anchor.cu by raft-build.sh there): `raft_anchor spknn MTX METRIC K NQ
--dump OUT` reads the same CSR written once per dataset as a Matrix Market file (real general),
copies it to the device and times raft::sparse::neighbors::brute_force_knn from the device CSR to
the graph in device memory (CUDA events; median of 10 runs after 3 warm-ups: 13 runs a process);
the queries are the first NQ rows, the index all rows. Metrics: cosine -> cosine (CosineExpanded;
two all-zero rows at distance 0, as spira), manhattan -> l1, euclidean -> l2 (L2SqrtExpanded: the
square root, spira's euclidean, from the expanded |x|^2 + |y|^2 - 2 x.y). Neither spira (without
exclude_self, as here) nor RAFT removes a point from its own list, so both graphs hold the point
itself; the comparison is the same as for the other peers. RAFT's cap is --raft-limit seconds of
raft_anchor processes a case: a probe on --probe-rows query rows, then the whole graph when 13 runs
of it (and the process' own overhead, measured by the probe) fit the limit, else the largest query
prefix that fits (at least twice the probe's rows), projected linearly ("extrapolated"). Every
process is listed in "runs" (rows, median ms, seconds of the process).

usage:
  GPU:  bench/knn/knn.py --bench BUILD/bench/bench_knn --backend cuda [--raft PATH/raft_anchor]
  host: bench/knn/knn.py --bench BUILD/bench/bench_knn --backend host --threads 2
  spira alone (e.g. the 2M-row short-row set):
        bench/knn/knn.py --bench BUILD/bench/bench_knn --backend cuda --datasets '' \
          --synthetic sec-edgar:2000000 --peers '' --spira-timeout 500
Results are appended as JSON lines to --out (default bench/results/knn_{gpu,host}-DATE.jsonl); the
first line describes the machine. bench/knn/knn_table.py turns them into docs/bench-knn.md.
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
import scipy.io
import scipy.sparse as sp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))  # datasets.py, raft_peer.py

from datasets import CHAR_NGRAM_WORDS, CHAR_NGRAM_WORDS_DESCRIPTION, DATASETS, char_ngram_words
from raft_peer import (RAFT_METRICS, RAFT_VERSION, capped_rows, raft_description, require_binary,
                       run_anchor, run_record, write_mtx)

# Table 2 shapes with the rows kept (the first rows of the full distribution; columns and degree law
# of the full set). sec-edgar at its full 663K rows; the others capped for the GPU lease.
SYNTHETIC_GPU = "sec-edgar:663000,nytimes-bow:100000,movielens-large:50000,scrna:20000"
SYNTHETIC_HOST = "sec-edgar:50000,nytimes-bow:10000"


# --peers names and the tool each writes in its records.
PEER_TOOLS = {"raft": "raft", "cusparse": "cusparse+torch", "sklearn": "sklearn"}


class Deadline:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()


def emit(out, rec):
    line = json.dumps(rec)
    print(line, flush=True)
    out.write(line + "\n")
    out.flush()


def load_npz(path):
    z = np.load(path)
    shape = tuple(int(s) for s in z["shape"])
    return sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=shape)


def compare(ref_idx, ref_dist, idx, dist):
    """Agreement with spira's graph on the same rows: the recall of spira's neighbours, where a
    different index also counts when its distance ties with spira's k-th (within float rounding:
    any of the tied rows is a correct k-th neighbour), and the largest difference between the two
    sorted distance lists."""
    ref_dist = ref_dist.astype(np.float64)
    dist = dist.astype(np.float64)
    k = ref_idx.shape[1]
    found = 0
    for a, da, b, db in zip(ref_idx, ref_dist, idx, dist):
        tol = 1e-5 * (1.0 + abs(da[-1]))
        shared = np.isin(b, a)
        ties = ~shared & (np.abs(db - da[-1]) <= tol)
        found += min(k, int(shared.sum() + ties.sum()))
    recall = found / float(ref_idx.shape[0] * k)
    return recall, float(np.max(np.abs(ref_dist - dist))) if ref_dist.size else 0.0


def timed_runs(fn, limit, repeats):
    """Calls fn() at least once, then again while the total stays under limit / 2 (at most repeats
    times); returns (median seconds, all seconds, last result)."""
    times, result = [], None
    while True:
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= repeats or sum(times) + times[-1] > limit / 2:
            break
    return float(np.median(times)), times, result


def peer_record(tool, label, x, k, metric, threads):
    return dict(tool=tool, dataset=label, rows=x.shape[0], cols=x.shape[1], nnz=int(x.nnz), k=k,
                metric=metric, threads=threads, median_ms=None, times_ms=[], measured_rows=None,
                extrapolated=False, recall_vs_spira=None, max_dist_diff=None, error=None)


def run_capped(rec, n, probe_rows, limit, repeats, run_rows, ref):
    """Probe on the first probe_rows rows, then the full run if it projects under the limit.
    run_rows(r) returns (indices, distances) of the first r query rows."""
    probe = min(n, probe_rows)
    t_probe, _, (idx, dist) = timed_runs(lambda: run_rows(probe), 0, 1)
    rows = probe
    if probe == n:
        med, times, (idx, dist) = timed_runs(lambda: run_rows(n), limit, repeats)
        rec.update(median_ms=1e3 * med, times_ms=[1e3 * t for t in times])
    elif t_probe * n / probe <= limit:
        med, times, (idx, dist) = timed_runs(lambda: run_rows(n), limit, repeats)
        rows = n
        rec.update(median_ms=1e3 * med, times_ms=[1e3 * t for t in times])
    else:
        rec.update(median_ms=1e3 * t_probe * n / probe, times_ms=[1e3 * t_probe],
                   extrapolated=True)
    rec["measured_rows"] = rows
    if ref is not None:
        rec["recall_vs_spira"], rec["max_dist_diff"] = compare(ref[0][:rows], ref[1][:rows],
                                                              idx[:rows], dist[:rows])


def sklearn_peer(rec, x, k, metric, threads, args, ref):
    from sklearn.neighbors import NearestNeighbors
    nn = NearestNeighbors(n_neighbors=k, algorithm="brute", metric=metric, n_jobs=threads).fit(x)

    def run_rows(r):
        dist, idx = nn.kneighbors(x[:r])
        return idx, dist

    run_capped(rec, x.shape[0], args.probe_rows, args.peer_limit, args.repeats, run_rows, ref)


def cusparse_peer(rec, x, k, args, ref):
    """cosine: C = X @ X.T by cuSPARSE SpGEMM (CuPy) in row blocks, densified, 1 - C / (|x| |y|),
    then torch.topk (smallest, sorted); timed from the CSR on the device to the graph on the host."""
    import cupy as cp
    import cupyx.scipy.sparse as csp
    import torch

    xg = csp.csr_matrix(x)
    cp.cuda.Device().synchronize()
    n = x.shape[0]
    # Row blocks: the SpGEMM output and its dense copy, about 12 bytes per pair, within 24 GB; halved
    # while cuSPARSE runs out of resources or memory (the first failure is kept in the record).
    state = dict(block=max(1, min(n, int(24e9 // (12 * max(n, 1))))))

    def out_of_resources(e):
        return (isinstance(e, cp.cuda.memory.OutOfMemoryError) or "INSUFFICIENT_RESOURCES" in str(e)
                or "ALLOC_FAILED" in str(e))

    def run_rows(r):
        xt = xg.T.tocsr()
        norms = cp.sqrt(cp.asarray(xg.multiply(xg).sum(axis=1)).ravel())
        inv = cp.where(norms > 0, 1.0 / cp.maximum(norms, 1e-30), 0.0).astype(cp.float32)
        empty = norms == 0
        has_empty = bool(empty.any())
        vals, inds = [], []
        r0 = 0
        while r0 < r:
            r1 = min(r, r0 + state["block"])
            try:
                c = (xg[r0:r1] @ xt).toarray()
            except Exception as e:  # noqa: BLE001 - only resource failures are retried
                if state["block"] <= 64 or not out_of_resources(e):
                    raise
                rec.setdefault("first_error", f"{type(e).__name__}: {e}"[:300] +
                               f" (block of {state['block']} rows)")
                state["block"] //= 2
                cp.get_default_memory_pool().free_all_blocks()
                continue
            d = 1.0 - c * inv[r0:r1, None] * inv[None, :]
            if has_empty:  # cosine with an all-zero row: 0 against another one, else 1 (as spira)
                d[empty[r0:r1], :] = 1.0
                d[:, empty] = 1.0
                d[cp.ix_(cp.nonzero(empty[r0:r1])[0], cp.nonzero(empty)[0])] = 0.0
            td = torch.from_dlpack(d)
            v, i = torch.topk(td, k, dim=1, largest=False, sorted=True)
            vals.append(v)
            inds.append(i)
            del c, d, td
            r0 = r1
        v = torch.cat(vals).cpu().numpy()
        i = torch.cat(inds).cpu().numpy()
        return i, v

    run_rows(min(n, 256))  # warm-up: handles, kernels, memory pool
    run_rows(min(n, args.probe_rows))  # untimed: settles the block size on the probe's rows
    run_capped(rec, n, args.probe_rows, args.peer_limit, args.repeats, run_rows, ref)
    rec["block_rows"] = state["block"]
    free_gpu_pools()


def free_gpu_pools():
    """Hands the memory CuPy's and torch's caches hold back to the device, for the processes that
    follow (bench_knn's default budget is a share of the free memory; raft_anchor)."""
    for free in (lambda: __import__("cupy").get_default_memory_pool().free_all_blocks(),
                 lambda: __import__("torch").cuda.empty_cache()):
        try:
            free()
        except Exception:  # noqa: BLE001 - not installed, or no device
            pass


def raft_process(binary, mtx, metric, k, rows, timeout, dump):
    """One raft_anchor process on the first `rows` query rows: (median ms, indices, distances,
    facts from its output, seconds of the process). Raises RuntimeError with its message."""
    cmd = [binary, "spknn", mtx, RAFT_METRICS[metric], str(k), str(rows), "--dump", dump]
    if os.path.exists(dump):
        os.remove(dump)
    ms, facts, wall = run_anchor(cmd, rows, timeout, produced=(dump,))
    size = rows * k
    raw = np.fromfile(dump, dtype=np.int32, count=2 * size)
    if raw.size != 2 * size:
        raise RuntimeError(f"raft_anchor's dump holds {raw.size} words, not {2 * size}")
    idx = raw[:size].reshape(rows, k)
    dist = raw[size:].view(np.float32).reshape(rows, k)
    return ms, idx, dist, facts, wall


def raft_peer(rec, x, k, metric, args, ref, mtx_of, tmp, deadline):
    """RAFT's sparse brute-force k-NN through raft_anchor (module docstring), capped at
    args.raft_limit seconds of processes a case; mtx_of() gives the Matrix Market file."""
    if metric not in RAFT_METRICS:
        rec["unsupported"] = True
        raise RuntimeError(f"no RAFT metric mapped for {metric} (known: {', '.join(RAFT_METRICS)})")
    binary = args.raft
    require_binary(binary)
    rec.update(version=RAFT_VERSION, raft_metric=RAFT_METRICS[metric], runs=[],
               timing="device CSR in, device graph out (CUDA events around brute_force_knn)")
    n = x.shape[0]
    dump = os.path.join(tmp, "raft.bin")
    mtx = mtx_of()

    def timeout(expected):
        return max(5.0, min(expected, deadline.left() - 5))

    def run(rows, expected):
        ms, idx, dist, facts, wall = raft_process(binary, mtx, metric, k, rows, timeout(expected),
                                                  dump)
        rec["runs"].append(run_record(ms, wall, facts, rows))
        rec.setdefault("device", facts.get("device"))
        read = tuple(int(facts.get(f, -1)) for f in ("rows", "cols", "nnz"))
        if read[:2] != x.shape:
            raise RuntimeError(f"raft_anchor read a {read[0]} x {read[1]} matrix, not "
                               f"{x.shape[0]} x {x.shape[1]}")
        if read[2] != x.nnz:
            rec["nnz_read"] = read[2]
        return ms, wall, (idx, dist)

    ms, rows, (idx, dist) = capped_rows(rec, n, args.probe_rows, args.raft_limit, run)
    rec.update(median_ms=ms * n / rows, times_ms=[ms], measured_rows=rows, extrapolated=rows < n)
    if ref is not None:
        rec["recall_vs_spira"], rec["max_dist_diff"] = compare(ref[0][:rows], ref[1][:rows], idx, dist)


def machine_record(args):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    rec = dict(tool="machine", date=datetime.date.today().isoformat(), backend=args.backend,
               cpu=cpu, cores=os.cpu_count(), platform=platform.platform(),
               python=platform.python_version(), numpy=np.__version__, k=args.k,
               repeats=args.repeats, peer_limit_s=args.peer_limit, raft_limit_s=args.raft_limit,
               probe_rows=args.probe_rows, resident=args.backend == "cuda" and not args.no_resident,
               threads=args.threads, load_average=os.getloadavg()[0],
               omp_wait_policy=os.environ.get("OMP_WAIT_POLICY"))
    try:  # the code measured: the commit, "+ uncommitted changes" when the tree differs from it
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        rec["spira_revision"] = rev + (" + uncommitted changes" if dirty else "")
    except Exception as e:  # noqa: BLE001 - not a git checkout
        rec["spira_revision"] = f"unknown: {type(e).__name__}"
    for mod in ("scipy", "sklearn", "cupy", "torch"):
        try:
            rec[mod] = __import__(mod).__version__
        except Exception as e:  # noqa: BLE001 - an absent peer is reported, not fatal
            rec[mod] = f"unavailable: {type(e).__name__}: {e}"
    if "raft" in args.peer_list:
        rec["raft"] = raft_description(args.raft)
    if args.backend == "cuda":
        try:
            rec["gpu"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                capture_output=True, text=True, check=True).stdout.strip()
        except Exception as e:  # noqa: BLE001
            rec["gpu"] = f"unknown: {e}"
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="the bench_knn executable")
    ap.add_argument("--backend", choices=["cuda", "host"], required=True)
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="host: spira's threads; every backend: scikit-learn's n_jobs")
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--datasets", default=",".join(d[0] for d in DATASETS),
                    help="labels of DATASETS, run in this order")
    ap.add_argument("--synthetic", default=None, help="NAME:ROWS,... ('' for none)")
    ap.add_argument("--words", action="store_true",
                    help=f"also {CHAR_NGRAM_WORDS}: {CHAR_NGRAM_WORDS_DESCRIPTION} (scikit-learn)")
    ap.add_argument("--k", type=int, default=15)
    ap.add_argument("--metrics", default="cosine,manhattan")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-seconds", type=float, default=10, help="spira: timed calls per case")
    ap.add_argument("--spira-timeout", type=float, default=180, help="one bench_knn process")
    ap.add_argument("--peer-limit", type=float, default=20, help="seconds per peer case")
    ap.add_argument("--probe-rows", type=int, default=2048)
    ap.add_argument("--peers", default="raft,cusparse,sklearn",
                    help="of raft, cusparse, sklearn ('' for spira alone; raft and cusparse: GPU)")
    ap.add_argument("--raft", default=os.environ.get("SPIRA_RAFT_PEER"),
                    help="raft_anchor (default $SPIRA_RAFT_PEER)")
    ap.add_argument("--raft-limit", type=float, default=60,
                    help="seconds of raft_anchor processes per case (each runs the graph 13 times)")
    ap.add_argument("--no-resident", action="store_true",
                    help="GPU: do not also time spira device-resident (bench_knn --resident)")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds for the whole run")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    deadline = Deadline(args.deadline)
    if args.synthetic is None:
        args.synthetic = SYNTHETIC_GPU if args.backend == "cuda" else SYNTHETIC_HOST
    metrics = [m for m in args.metrics.split(",") if m]
    peers = [p for p in args.peers.split(",") if p]
    for p in peers:
        if p not in PEER_TOOLS:
            ap.error(f"unknown peer {p!r} (known: {', '.join(PEER_TOOLS)})")
    if args.backend != "cuda":
        peers = [p for p in peers if p == "sklearn"]
    args.peer_list = peers
    today = datetime.date.today().isoformat()
    out_path = args.out or os.path.join(
        ROOT, "bench", "results", f"knn_{'gpu' if args.backend == 'cuda' else 'host'}-{today}.jsonl")
    os.makedirs(os.path.dirname(out_path), exist_ok=True)

    known = {label: (rel, tr) for label, rel, tr in DATASETS}
    wanted = [d for d in args.datasets.split(",") if d]
    for d in wanted:
        if d not in known:
            ap.error(f"unknown dataset {d!r} (known: {', '.join(known)})")
    cases = [(d, ["--file", os.path.join(args.data, known[d][0])] + (["--transpose"] if known[d][1] else []))
             for d in wanted]
    for item in [s for s in args.synthetic.split(",") if s]:
        name, rows = item.split(":")
        label = f"synthetic-{name}" + ("" if rows == "0" else f"-{int(rows) // 1000}k")
        cases.append((label, ["--synthetic", name, "--synthetic-rows", rows]))

    with open(out_path, "w") as out, tempfile.TemporaryDirectory() as tmp, \
            tempfile.TemporaryDirectory() as keep:
        emit(out, machine_record(args))
        if args.words:  # in `keep`: each case empties tmp after it
            words = os.path.join(keep, "words.mtx")
            try:
                scipy.io.mmwrite(words, char_ngram_words(args.data))
                cases.append((CHAR_NGRAM_WORDS, ["--file", words]))
            except Exception as e:  # a result, never dropped
                emit(out, dict(tool="spira", dataset=CHAR_NGRAM_WORDS, error=f"not built: {e}"))
        for label, source in cases:
            if source[0] == "--file" and not os.path.exists(source[1]):
                emit(out, dict(tool="spira", dataset=label, error=f"data file absent: {source[1]}"))
                continue
            if deadline.left() < 5:
                emit(out, dict(tool="spira", dataset=label, skipped="the run's deadline passed"))
                continue
            matrix = os.path.join(tmp, "x.npz")
            graph = os.path.join(tmp, "g")
            cmd = [args.bench, *source, "--backend", args.backend, "--threads",
                   str(args.threads if args.backend == "host" else 0), "--k", str(args.k),
                   "--metrics", ",".join(metrics), "--repeats", str(args.repeats), "--max-seconds",
                   str(args.max_seconds), "--label", label]
            if peers:  # the data and spira's graphs, for the peers only
                cmd += ["--save-matrix", matrix, "--save-graph", graph]
            if args.backend == "cuda" and not args.no_resident:
                cmd.append("--resident")
            print("==", " ".join(cmd), file=sys.stderr, flush=True)
            spira_ok = {}
            try:
                res = subprocess.run(cmd, capture_output=True, text=True,
                                     timeout=min(args.spira_timeout, max(deadline.left(), 5)))
                lines = [l for l in res.stdout.splitlines() if l.startswith("{")]
                for l in lines:
                    rec = json.loads(l)
                    emit(out, rec)
                    spira_ok[rec["metric"]] = rec["error"] is None
                if res.returncode != 0 or not lines:
                    emit(out, dict(tool="spira", dataset=label,
                                   error=f"bench_knn exit {res.returncode}: {res.stderr.strip()[-500:]}"))
            except subprocess.TimeoutExpired as e:
                partial = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
                for l in partial.splitlines():
                    if l.startswith("{"):
                        rec = json.loads(l)
                        emit(out, rec)
                        spira_ok[rec["metric"]] = rec["error"] is None
                done = ", ".join(spira_ok) or "no metric"
                emit(out, dict(tool="spira", dataset=label,
                               error=f"bench_knn did not finish within {e.timeout:.0f} s "
                                     f"(finished: {done})"))
            if not os.path.exists(matrix):
                continue
            x = load_npz(matrix)
            mtx = {}  # the Matrix Market copy for RAFT, written on first use

            def mtx_of():
                if "path" not in mtx:
                    t0 = time.perf_counter()
                    mtx["path"] = os.path.join(tmp, "x.mtx")
                    write_mtx(x, mtx["path"])
                    print(f"== wrote {mtx['path']} in {time.perf_counter() - t0:.1f} s",
                          file=sys.stderr, flush=True)
                return mtx["path"]

            for metric in metrics:
                ref = None
                gpath = f"{graph}-{metric}.npz"
                if spira_ok.get(metric) and os.path.exists(gpath):
                    g = np.load(gpath)
                    ref = (g["indices"], g["distances"])
                for peer in peers:
                    rec = peer_record(PEER_TOOLS[peer], label, x, args.k, metric,
                                      args.threads if peer == "sklearn" else 0)
                    if peer == "cusparse" and metric != "cosine":
                        rec["error"] = (f"no cuSPARSE path: {metric} is not a dot product "
                                        "(cuSPARSE SpGEMM computes plus-times only)")
                        rec["unsupported"] = True
                        emit(out, rec)
                        continue
                    limit = args.raft_limit if peer == "raft" else args.peer_limit
                    if deadline.left() < 2 * limit:
                        rec["skipped"] = "the run's deadline was near"
                        emit(out, rec)
                        continue
                    try:
                        if peer == "sklearn":
                            sklearn_peer(rec, x, args.k, metric, args.threads, args, ref)
                        elif peer == "cusparse":
                            cusparse_peer(rec, x, args.k, args, ref)
                        else:
                            raft_peer(rec, x, args.k, metric, args, ref, mtx_of, tmp, deadline)
                    except Exception as e:  # noqa: BLE001 - a peer's failure is a result
                        rec["error"] = f"{type(e).__name__}: {e}"[:500]
                        if peer == "cusparse":
                            free_gpu_pools()
                    emit(out, rec)
            for f in os.listdir(tmp):
                os.remove(os.path.join(tmp, f))
    print(f"wrote {out_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
