#!/usr/bin/env python3
"""Distance graphs of the shared datasets, as ragged CSR rows for the select_k benchmark.

Definition (bench/select_k/select_k.py and the table of docs/bench-select.md quote it): for every
dataset of ../shared/data that loads as a sparse row matrix A (rows = samples; pbmc3k transposed to
cells x genes; the email-Enron edge list as its adjacency rows), the distance graph G holds the
cosine distance 1 - <a_i, a_j> / (|a_i| |a_j|) for every pair of rows that share at least one stored
column: the stored pattern of A A^T, diagonal included, one CSR row per row of A, float32 values,
int32 column indices, ragged (power-law) row degrees. The pattern is that of the product of the
patterns, so a pair whose dot product cancels to zero keeps its entry (distance 1). Where the whole
graph would hold more than --max-entries entries (default 2^27), only the first R rows of A are
query rows, R the largest count whose graph stays within that size; R is reported ("rows",
"truncated").

Built with scipy's sparse products on the CPU, row blocks spread over --workers processes. Each
graph is written as an uncompressed scipy .npz (readable by spira::read_npz and numpy.load) into
--out, with a manifest graphs.json; a later run with the same sources and parameters reuses them.

    python3 -s bench/select_k/select_k_graphs.py --data ../shared/data --out /tmp/graphs \\
        [--datasets a,b]

Exit status: 0 when every graph was written (failures of single datasets are listed in the
manifest's "errors"), 3 when numpy or scipy cannot be imported, 2 for bad arguments.
"""
import argparse
import json
import multiprocessing
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))  # datasets.py

try:
    import numpy as np
    import scipy.sparse as sp

    from datasets import DATASETS, load_csr
except Exception as e:  # the caller retries with another interpreter
    sys.stderr.write("select_k_graphs: cannot import numpy/scipy: %s\n" % e)
    sys.exit(3)

DEFINITION = (
    "cosine distance between every pair of rows of the dataset that share a stored column (the "
    "stored pattern of A A^T, diagonal included), one CSR row per row of A, float32 values, int32 "
    "columns; where the graph would exceed %d entries, the first R rows of A only")
FORMAT_VERSION = 1


# Operands of the block products, set before the worker pool forks (read-only in the workers).
_ops = {}


def _block(bounds):
    """Rows [lo, hi) of the distance graph: (indptr from 0, int32 columns, float32 distances)."""
    lo, hi = bounds
    sim = (_ops["an"][lo:hi] @ _ops["an_t"]).tocsr()
    sim.sort_indices()
    if _ops["pat"] is None:
        # positive entries whose products cannot underflow: no sum cancels, so the pattern of the
        # value product is the pattern of A A^T
        indptr, indices, sims = sim.indptr, sim.indices, sim.data
    else:
        pat = (_ops["pat"][lo:hi] @ _ops["pat_t"]).tocsr()
        pat.sort_indices()
        indptr, indices = pat.indptr, pat.indices
        sims = np.zeros(len(indices), np.float32)
        if sim.nnz:
            # the value product's entries are a subset of the pattern's (both sorted per row)
            ncols = np.int64(pat.shape[1])
            local = np.arange(hi - lo, dtype=np.int64)
            key = np.repeat(local, np.diff(pat.indptr)) * ncols + indices
            skey = np.repeat(local, np.diff(sim.indptr)) * ncols + sim.indices
            sims[np.searchsorted(key, skey)] = sim.data
    dist = (np.float32(1) - sims.astype(np.float32, copy=False)).astype(np.float32, copy=False)
    return (np.asarray(indptr, np.int64) - int(indptr[0]), np.asarray(indices, np.int32), dist)


def distance_graph(a, max_entries, workers):
    """The distance graph of the first R rows of a (R as large as max_entries allows).
    Returns (csr graph, R)."""
    n = a.shape[0]
    norms = np.sqrt(np.asarray(a.multiply(a).sum(axis=1), dtype=np.float64).ravel())
    norms[norms == 0] = 1.0  # rows without a stored value have no graph entries either
    an = sp.csr_matrix(sp.diags((1.0 / norms).astype(np.float32)) @ a, dtype=np.float32)
    an.sort_indices()
    pattern_needed = bool(an.nnz) and not bool(np.all(an.data > np.float32(1e-18)))
    pat = None
    if pattern_needed:
        pat = an.copy()
        pat.data = np.ones(pat.nnz, np.float32)
    _ops.clear()
    _ops.update(an=an, an_t=an.T.tocsr(), pat=pat, pat_t=None if pat is None else pat.T.tocsr())

    # Blocks of about equal multiply-add count (an upper bound of their entries), small enough that
    # the work done past the size cut stays a fraction of the whole.
    col_deg = np.bincount(an.indices, minlength=a.shape[1]).astype(np.int64)
    per_entry = np.concatenate(([0], np.cumsum(col_deg[an.indices])))
    cum = per_entry[an.indptr[1:]]  # multiply-adds of rows [0, i]
    budget = min(int(cum[-1]) if n else 0, 4 * max_entries)  # entries <= flops
    per_block = max(1, budget // max(1, 8 * workers))
    cuts = [0]
    while cuts[-1] < n:
        target = (int(cum[cuts[-1] - 1]) if cuts[-1] > 0 else 0) + per_block
        nxt = int(np.searchsorted(cum, target, side="right"))
        cuts.append(min(n, max(nxt, cuts[-1] + 1)))
    blocks = list(zip(cuts[:-1], cuts[1:]))

    parts, total, rows = [], 0, 0
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(max(1, workers)) as pool:
        for (lo, hi), (indptr, indices, dist) in zip(blocks, pool.imap(_block, blocks)):
            if total + indptr[-1] > max_entries:
                keep = int(np.searchsorted(indptr, max_entries - total, side="right")) - 1
                if keep > 0:
                    parts.append((indptr[:keep + 1], indices[:indptr[keep]], dist[:indptr[keep]]))
                    rows += keep
                    total += int(indptr[keep])
                break
            parts.append((indptr, indices, dist))
            rows += hi - lo
            total += int(indptr[-1])
        pool.terminate()
    _ops.clear()
    indptr = np.zeros(rows + 1, np.int64)
    at = 0
    offset = 0
    for p, _, _ in parts:
        indptr[at + 1:at + len(p)] = p[1:] + offset
        at += len(p) - 1
        offset += int(p[-1])
    indices = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int32)
    data = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.float32)
    g = sp.csr_matrix((data, indices, indptr), shape=(rows, n))
    g.has_sorted_indices = True
    return g, rows


def degree_stats(g):
    deg = np.diff(g.indptr)
    return dict(min_degree=int(deg.min()) if len(deg) else 0,
                median_degree=float(np.median(deg)) if len(deg) else 0.0,
                max_degree=int(deg.max()) if len(deg) else 0,
                empty_rows=int(np.count_nonzero(deg == 0)))


def _load_task(job):
    """(matrix, None) or (None, error text): a failing dataset does not stop the others."""
    path, transpose = job
    try:
        return load_csr(path, transpose), None
    except Exception as e:
        return None, "%s: %s" % (type(e).__name__, e)


def source_stamp(path):
    st = os.stat(path)
    return [os.path.basename(path), int(st.st_size), int(st.st_mtime)]


def build(data_dir, out_dir, names, max_entries, workers, log=sys.stdout):
    """Writes (or reuses) the graphs and their manifest; returns the manifest."""
    os.makedirs(out_dir, exist_ok=True)
    manifest_path = os.path.join(out_dir, "graphs.json")
    old = {}
    if os.path.exists(manifest_path):
        try:
            with open(manifest_path) as f:
                old = {g["dataset"]: g for g in json.load(f).get("graphs", [])}
        except (OSError, ValueError, KeyError):
            old = {}
    graphs, errors, todo = [], [], []
    t_all = time.monotonic()
    for label, rel, transpose in DATASETS:
        if names and label not in names:
            continue
        src = os.path.join(data_dir, rel)
        if not os.path.exists(src):
            errors.append(dict(dataset=label, what="missing: %s" % src))
            continue
        stamp = source_stamp(src)
        prev = old.get(label)
        path = os.path.join(out_dir, label + ".npz")
        if (prev and prev.get("source_stamp") == stamp and prev.get("max_entries") == max_entries
                and prev.get("version") == FORMAT_VERSION and os.path.exists(path)):
            graphs.append(prev)
            log.write("graph %-24s reused %s\n" % (label, path))
            continue
        todo.append((label, rel, transpose, src, stamp, path))
    # The readers are serial (text parsing): read all datasets at once, one process each.
    t_load = time.monotonic()
    with multiprocessing.get_context("fork").Pool(max(1, min(workers, len(todo)))) as pool:
        loaded = pool.map(_load_task, [(t[3], t[2]) for t in todo], chunksize=1)
    t_load = time.monotonic() - t_load
    if todo:
        log.write("graphs: %d datasets read in %.1f s\n" % (len(todo), t_load))
    for (label, rel, transpose, src, stamp, path), (a, err) in zip(todo, loaded):
        if err is not None:
            errors.append(dict(dataset=label, what=err))
            continue
        t0 = time.monotonic()
        try:
            g, r = distance_graph(a, max_entries, workers)
            sp.save_npz(path, g, compressed=False)
        except Exception as e:  # reported, the other datasets still run
            errors.append(dict(dataset=label, what="%s: %s" % (type(e).__name__, e)))
            continue
        rec = dict(dataset=label, file=path, source=rel, source_stamp=stamp, transpose=transpose,
                   version=FORMAT_VERSION, max_entries=max_entries, a_rows=a.shape[0],
                   a_cols=a.shape[1], a_nnz=int(a.nnz), rows=r, cols=g.shape[1], nnz=int(g.nnz),
                   truncated=r < a.shape[0], seconds=round(time.monotonic() - t0, 3))
        rec.update(degree_stats(g))
        graphs.append(rec)
        log.write("graph %-24s %7d of %7d rows  nnz %10d  degree %d..%d  %.1f s\n" % (
            label, r, a.shape[0], g.nnz, rec["min_degree"], rec["max_degree"], rec["seconds"]))
        log.flush()
    order = [d[0] for d in DATASETS]
    graphs.sort(key=lambda g: order.index(g["dataset"]))
    manifest = dict(definition=DEFINITION % max_entries, max_entries=max_entries, workers=workers,
                    read_seconds=round(t_load, 3), seconds=round(time.monotonic() - t_all, 3),
                    graphs=graphs, errors=errors)
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def default_data_dir():
    carried = os.path.join(ROOT, ".carry", "data")
    return carried if os.path.isdir(carried) else os.path.join(ROOT, "..", "shared", "data")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=default_data_dir())
    ap.add_argument("--out", required=True)
    ap.add_argument("--datasets", default="", help="comma-separated labels (default: all)")
    ap.add_argument("--max-entries", type=int, default=1 << 27)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    names = [s for s in args.datasets.split(",") if s]
    unknown = [s for s in names if s not in [d[0] for d in DATASETS]]
    if unknown:
        ap.error("unknown dataset(s) %s; known: %s" % (",".join(unknown),
                                                        ",".join(d[0] for d in DATASETS)))
    if args.max_entries < 1:
        ap.error("--max-entries must be >= 1")
    m = build(args.data, args.out, names, args.max_entries, args.workers)
    for e in m["errors"]:
        sys.stdout.write("graph %-24s ERROR %s\n" % (e["dataset"], e["what"]))
    print("graphs: %d written in %.1f s -> %s" % (len(m["graphs"]), m["seconds"],
                                                  os.path.join(args.out, "graphs.json")))


if __name__ == "__main__":
    main()
