"""spira knn against a brute-force oracle (scipy cdist + a full sort with the tie rule)."""
import os
import unittest

import numpy as np
import scipy.io
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from clitest import CliTestCase, run

SCIPY_NAME = {"cosine": "cosine", "euclidean": "euclidean", "manhattan": "cityblock",
              "sqeuclidean": "sqeuclidean", "chebyshev": "chebyshev"}


def brute_force(index, queries, k, metric, exclude_self=False, self_first=False):
    """self_first: the index queried against itself without exclude_self, where each point comes
    before every other index at its own distance (spira's tie rule for that case)."""
    q = queries.toarray().astype(np.float64)
    x = index.toarray().astype(np.float64)
    if metric == "inner_product":
        d = -(q @ x.T)  # a similarity: the largest first
    else:
        d = cdist(q, x, SCIPY_NAME[metric])
    if exclude_self:
        np.fill_diagonal(d, np.inf)
    rank = np.broadcast_to(np.arange(d.shape[1]), d.shape).copy()
    if self_first:
        np.fill_diagonal(rank, -1)
    order = np.lexsort((rank, d), axis=1)[:, :k]
    dist = np.take_along_axis(d, order, axis=1)
    return order, (-dist if metric == "inner_product" else dist)


class KnnTest(CliTestCase):
    def setUp(self):
        super().setUp()
        kos = scipy.io.mmread(self.dataset("uci-bow-kos", "docword.kos.mtx.gz")).tocsr()
        self.x = kos[:600].astype(np.float64)
        self.src = self.path("x.mtx")
        scipy.io.mmwrite(self.src, self.x)

    def run_knn(self, *extra):
        out = self.path("g.npz")
        self.assert_ok("knn", self.src, "-o", out, *extra)
        g = np.load(out)
        self.assertEqual(g["indices"].dtype, np.int64)
        self.assertEqual(g["distances"].dtype, np.float32)
        return g["indices"], g["distances"]

    def compare(self, got_idx, got_dist, want_idx, want_dist, tol=2e-5):
        """Equal as sets under the tie rule: distances match, indices match except among ties."""
        np.testing.assert_allclose(got_dist, want_dist, rtol=tol, atol=tol)
        mismatched = got_idx != want_idx
        # An index may differ only where its distance ties (within the tolerance) with another.
        for r, c in zip(*np.nonzero(mismatched)):
            row = want_dist[r]
            ties = np.isclose(row, row[c], rtol=tol, atol=tol).sum()
            self.assertGreater(ties, 1, f"row {r} position {c}: {got_idx[r, c]} vs {want_idx[r, c]}")

    def test_metrics_with_small_tiles(self):
        for metric in ("cosine", "manhattan", "euclidean", "inner_product"):
            all_idx, all_dist = brute_force(self.x, self.x, 100, metric, self_first=True)
            for k in (1, 15, 100):
                with self.subTest(metric=metric, k=k):
                    # 1 MiB forces many index tiles, so the running merge runs many times
                    idx, dist = self.run_knn("-k", k, "--metric", metric, "--memory-budget-mb", 1)
                    self.compare(idx, dist, all_idx[:, :k], all_dist[:, :k])

    def test_cuda_backend(self):
        out = self.path("g.npz")
        code, _, err = run("knn", self.src, "-k", 5, "--metric", "cosine", "-o", out, "--backend", "cuda")
        if code != 0 and ("no CUDA device" in err or "without CUDA" in err):
            self.skipTest(err.strip())
        self.assertEqual(code, 0, err)
        for metric in ("cosine", "manhattan", "inner_product", "chebyshev"):
            all_idx, all_dist = brute_force(self.x, self.x, 100, metric, self_first=True)
            scale = max(1.0, float(np.abs(all_dist).max()))
            for k in (1, 15, 100):
                # the tiled algorithm with many small tiles, and the fused one
                for algo in (("--memory-budget-mb", 1), ("--algo", "fused", "--strategy",
                                                         "intersection")):
                    with self.subTest(metric=metric, k=k, algo=algo):
                        idx, dist = self.run_knn("-k", k, "--metric", metric, "--backend", "cuda",
                                                 *algo)
                        # float32 on the GPU: distances within 1e-4 of the float64 oracle's scale
                        self.compare(idx, dist / scale, all_idx[:, :k], all_dist[:, :k] / scale,
                                     tol=1e-4)
        for algo in ("fused", "tiled"):
            idx, dist = self.run_knn("-k", 3, "--metric", "euclidean", "--exclude-self",
                                     "--backend", "cuda", "--algo", algo)
            for r in range(len(idx)):
                self.assertNotIn(r, idx[r])

    def test_queries_differ_from_index(self):
        q = self.path("q.mtx")
        scipy.io.mmwrite(q, self.x[:37])
        out = self.path("g.npz")
        self.assert_ok("knn", self.src, "--query", q, "-k", 10, "--metric", "cosine", "-o", out)
        g = np.load(out)
        want_idx, want_dist = brute_force(self.x, self.x[:37], 10, "cosine")
        self.compare(g["indices"], g["distances"], want_idx, want_dist)

    def test_exclude_self_keeps_duplicates(self):
        dup = sp.vstack([self.x[:50], self.x[:10]]).tocsr()  # rows 50..59 duplicate rows 0..9
        scipy.io.mmwrite(self.src, dup)
        idx, dist = self.run_knn("-k", 3, "--metric", "euclidean", "--exclude-self")
        for r in range(60):
            self.assertNotIn(r, idx[r])
        for r in range(10):
            self.assertEqual(idx[r, 0], r + 50)
            self.assertEqual(dist[r, 0], 0.0)
            self.assertEqual(idx[r + 50, 0], r)
        self.x = dup
        want_idx, want_dist = brute_force(dup, dup, 3, "euclidean", exclude_self=True)
        self.compare(idx, dist, want_idx, want_dist)

    def test_summary_and_recall(self):
        out = self.path("g.npz")
        text = self.assert_ok("knn", self.src, "-k", 5, "--metric", "cosine", "-o", out,
                              "--check-recall", 20)
        self.assertIn("recall vs brute force on 20 rows: 1.0000", text)

    def test_bad_arguments(self):
        out = self.path("g.npz")
        self.assert_fails_clearly("knn", self.src, "-k", 601, "--metric", "cosine", "-o", out,
                                  mentions=["-k", "601"])
        self.assert_fails_clearly("knn", self.src, "-k", 600, "--metric", "cosine", "-o", out,
                                  "--exclude-self", mentions=["-k"])
        self.assert_fails_clearly("knn", self.src, "-k", 5, "--metric", "cosinus", "-o", out,
                                  mentions=["cosinus"])
        self.assert_fails_clearly("knn", self.src, "-k", 5, "--metric", "cosine", "-o", out,
                                  "--query", self.src, "--exclude-self", mentions=["--exclude-self"])
        self.assert_fails_clearly("knn", self.src, "-k", 5, "--metric", "cosine", "-o", out,
                                  "--backend", "host", "--algo", "fused", mentions=["--algo"])
        self.assert_fails_clearly("knn", self.src, "-k", 5, "--metric", "cosine", "-o", out,
                                  "--backend", "host", "--strategy", "dense",
                                  mentions=["--strategy"])
        missing = os.path.join(self.path("no-such-dir"), "g.npz")
        self.assert_fails_clearly("knn", self.src, "-k", 5, "--metric", "cosine", "-o", missing,
                                  mentions=["--output", "no-such-dir"])
        self.assert_fails_clearly("knn", self.src, "-k", 5, "--metric", "cosine", "-o",
                                  os.path.dirname(out), mentions=["--output", "directory"])
        narrow = self.path("narrow.mtx")
        scipy.io.mmwrite(narrow, self.x[:5, :100])
        self.assert_fails_clearly("knn", self.src, "--query", narrow, "-k", 5, "--metric",
                                  "cosine", "-o", out, mentions=["columns"])


if __name__ == "__main__":
    unittest.main()
