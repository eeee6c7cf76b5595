#!/usr/bin/env python3
"""cuSPARSE SpGEMM baseline for the GPU pairwise benchmark, through CuPy (cupyx.scipy.sparse).

For each dataset, cosine and euclidean as dot products: C = A @ B.T (cuSPARSE SpGEMM), densified,
then the norm expansion, timed with CUDA events (median of --repeats after one warm-up). Failures
(exceptions, or a product with no stored entry although the data has shared columns) are reported,
not hidden. Prints one JSON object per (dataset, metric).

usage: pairwise_gpu_cusparse.py DATA_DIR [--repeats N]
"""
import argparse
import gzip
import json
import sys

import numpy as np
import scipy.io
import scipy.sparse as sp

DATASETS = [  # (label, relative path, transpose)
    ("uci-bow-kos", "uci-bow-kos/docword.kos.mtx.gz", False),
    ("movielens-latest-small", "movielens-latest-small/ratings.mtx.gz", False),
    ("pbmc3k", "pbmc3k/matrix.mtx.gz", True),
    ("20newsgroups", "20newsgroups/tfidf.mtx.gz", False),
    ("sec-edgar-names", "sec-edgar-names/char3gram_tfidf.mtx.gz", False),
]


def load(path, transpose):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        m = scipy.io.mmread(f)
    m = sp.csr_matrix(m, dtype=np.float32)
    if transpose:
        m = sp.csr_matrix(m.T)
    m.sum_duplicates()
    m.sort_indices()
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    import cupy as cp
    import cupyx.scipy.sparse as csp

    for label, rel, transpose in DATASETS:
        try:
            host = load(f"{args.data}/{rel}", transpose)
        except Exception as e:  # noqa: BLE001 - report and go on
            print(json.dumps({"dataset": label, "tool": "cusparse", "error": f"load: {e}"}))
            continue
        a = csp.csr_matrix(host)
        bt = csp.csr_matrix(host.T.tocsr())
        sq = cp.asarray(np.asarray(host.multiply(host).sum(axis=1)).ravel())
        for metric in ("cosine", "euclidean"):
            def run():
                c = (a @ bt).toarray()
                if metric == "cosine":
                    n = cp.sqrt(sq)
                    d = 1.0 - c / cp.maximum(cp.outer(n, n), 1e-30)
                else:
                    d = cp.sqrt(cp.maximum(sq[:, None] + sq[None, :] - 2.0 * c, 0.0))
                return c, d
            rec = {"dataset": label, "tool": "cusparse", "metric": metric,
                   "rows": host.shape[0], "cols": host.shape[1], "nnz": int(host.nnz)}
            try:
                c, _ = run()
                cp.cuda.Device().synchronize()
                rec["product_nonzero"] = int(cp.count_nonzero(c).get())
                times = []
                start, stop = cp.cuda.Event(), cp.cuda.Event()
                for _ in range(args.repeats):
                    start.record()
                    c, d = run()
                    stop.record()
                    stop.synchronize()
                    times.append(cp.cuda.get_elapsed_time(start, stop))
                    del c, d
                times.sort()
                rec["median_ms"] = times[len(times) // 2]
                if rec["product_nonzero"] == 0:
                    rec["error"] = "empty product returned without an error"
            except Exception as e:  # noqa: BLE001 - cuSPARSE failures are results here
                rec["error"] = f"{type(e).__name__}: {e}"
            print(json.dumps(rec))
            sys.stdout.flush()
            cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
