"""spira knn against a brute-force oracle (scipy cdist + a full sort with the tie rule); --graph
against the graph built from the arrays by numpy, scipy's max(G, G.T) and, when it is importable,
scikit-learn's kneighbors_graph."""
import os
import unittest
import zipfile

import numpy as np
import scipy.io
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from clitest import CliTestCase, run

try:
    from sklearn.neighbors import NearestNeighbors, kneighbors_graph
except ImportError:  # pragma: no cover - depends on the machine
    NearestNeighbors = kneighbors_graph = None

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


def graph_of_arrays(idx, dist, n_index, mode):
    """The kneighbors_graph layout built from the default output: row i holds its k neighbours,
    nearest first, valued by distance or 1."""
    n, k = idx.shape
    data = dist.ravel() if mode == "distance" else np.ones(n * k, dtype=np.float32)
    return sp.csr_matrix((data, idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n_index))


class KnnGraphTest(CliTestCase):
    """--graph MODE [--symmetrize]: the CSR matrix scipy.sparse.load_npz reads, in the layout of
    sklearn.neighbors.kneighbors_graph. Random data without ties, so every oracle lists the same
    neighbours in the same order."""

    def setUp(self):
        super().setUp()
        rng = np.random.default_rng(28)
        x = rng.random((90, 12))
        x[x < 0.3] = 0
        self.x = sp.csr_matrix(x)
        self.src = self.path("x.mtx")
        scipy.io.mmwrite(self.src, self.x)
        q = rng.random((25, 12))
        q[q < 0.3] = 0
        self.q = sp.csr_matrix(q)
        self.qsrc = self.path("q.mtx")
        scipy.io.mmwrite(self.qsrc, self.q)

    def arrays(self, *extra):
        out = self.path("arrays.npz")
        self.assert_ok("knn", self.src, "--metric", "euclidean", "-o", out, *extra)
        with np.load(out) as f:
            self.assertEqual(f.files, ["indices", "distances"])  # without --graph: as before
            return f["indices"], f["distances"]

    def graph(self, *extra):
        out = self.path("graph.npz")
        text = self.assert_ok("knn", self.src, "--metric", "euclidean", "-o", out, *extra)
        self.assertIn("(CSR graph, ", text)
        return sp.load_npz(out), out

    def assert_same_csr(self, got, want):
        """Equal as stored: shape, row pointers, columns in their order, values."""
        self.assertEqual(got.shape, want.shape)
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.data, want.data)

    def test_members_are_those_of_scipy_save_npz(self):
        g, path = self.graph("-k", 5, "--graph", "distance")
        self.assertIsInstance(g, sp.csr_matrix)
        with zipfile.ZipFile(path) as z:
            self.assertEqual(z.namelist(), ["indices.npy", "indptr.npy", "format.npy", "shape.npy",
                                            "data.npy"])
        with np.load(path) as f:
            self.assertEqual(f["format"].dtype, np.dtype("S3"))
            self.assertEqual(f["format"].shape, ())
            self.assertEqual(f["format"][()], b"csr")
            self.assertEqual(f["shape"].dtype, np.int64)
            np.testing.assert_array_equal(f["shape"], [90, 90])
            self.assertEqual(f["data"].dtype, np.float32)
            self.assertEqual(f["indices"].dtype, np.int32)  # as scipy writes them when they fit
            self.assertEqual(f["indptr"].dtype, np.int32)
        self.assertEqual(g.nnz, 90 * 5)
        np.testing.assert_array_equal(np.diff(g.indptr), 5)
        # The same matrix scipy's own writer produces reads back identically.
        again = self.path("scipy.npz")
        sp.save_npz(again, g, compressed=False)
        self.assert_same_csr(sp.load_npz(again), g)

    def test_modes_and_self_equal_the_arrays(self):
        for mode in ("distance", "connectivity"):
            for self_rule in ((), ("--exclude-self",)):
                for k in (1, 7):
                    with self.subTest(mode=mode, self_rule=self_rule, k=k):
                        idx, dist = self.arrays("-k", k, *self_rule)
                        g, _ = self.graph("-k", k, "--graph", mode, *self_rule)
                        self.assert_same_csr(g, graph_of_arrays(idx, dist, 90, mode))
                        first = g.indices[g.indptr[:-1]]
                        if self_rule:
                            self.assertEqual(g.diagonal().nonzero()[0].size, 0)
                            for r in range(90):
                                self.assertNotIn(r, g.indices[g.indptr[r]:g.indptr[r + 1]])
                        else:
                            # each point its own first neighbour, an explicit 0 in distance mode
                            np.testing.assert_array_equal(first, np.arange(90))
                            want = 0.0 if mode == "distance" else 1.0
                            np.testing.assert_array_equal(g.data[g.indptr[:-1]], want)
                        if kneighbors_graph is not None:
                            want = kneighbors_graph(self.x, k, mode=mode, metric="euclidean",
                                                    include_self=not self_rule)
                            self.assert_like_sklearn(g, want)

    def assert_like_sklearn(self, got, want):
        self.assertEqual(got.shape, want.shape)
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)  # nearest first, as stored
        np.testing.assert_allclose(got.data, want.data, rtol=1e-5, atol=1e-5)

    def test_query(self):
        for mode in ("distance", "connectivity"):
            with self.subTest(mode=mode):
                idx, dist = self.arrays("-k", 6, "--query", self.qsrc)
                g, _ = self.graph("-k", 6, "--graph", mode, "--query", self.qsrc)
                self.assertEqual(g.shape, (25, 90))
                self.assert_same_csr(g, graph_of_arrays(idx, dist, 90, mode))
                want_idx, want_dist = brute_force(self.x, self.q, 6, "euclidean")
                np.testing.assert_array_equal(idx, want_idx)
                if NearestNeighbors is not None:
                    nn = NearestNeighbors(n_neighbors=6, metric="euclidean").fit(self.x)
                    self.assert_like_sklearn(g, nn.kneighbors_graph(self.q, mode=mode))

    def test_symmetrize_is_max_of_g_and_its_transpose(self):
        for mode in ("distance", "connectivity"):
            for self_rule in ((), ("--exclude-self",)):
                with self.subTest(mode=mode, self_rule=self_rule):
                    g, _ = self.graph("-k", 4, "--graph", mode, *self_rule)
                    sym, _ = self.graph("-k", 4, "--graph", mode, "--symmetrize", *self_rule)
                    self.assertEqual(sym.shape, (90, 90))
                    np.testing.assert_array_equal(sym.toarray(), g.maximum(g.T).toarray())
                    # Stored: the union of the patterns of G and G^T (explicit zeros included),
                    # columns increasing, the same value both ways.
                    pattern = g.copy()
                    pattern.data[:] = 1
                    union = (pattern + pattern.T).tocsr()
                    union.sort_indices()
                    np.testing.assert_array_equal(sym.indptr, union.indptr)
                    np.testing.assert_array_equal(sym.indices, union.indices)
                    self.assertTrue(sym.has_sorted_indices)
                    self.assertEqual((sym != sym.T).nnz, 0)
                    self.assertGreater(sym.nnz, g.nnz)  # a k-NN graph is not symmetric
                    if not self_rule and mode == "distance":
                        np.testing.assert_array_equal(sym.diagonal(), 0)
                        self.assertEqual(sym.nnz, union.nnz)  # the diagonal's zeros are stored

    def assert_usage_error(self, *args, mentions=()):
        """Exit status 2, one line on stderr naming what it should, no output file."""
        out = self.path("bad.npz")
        code, _, err = run("knn", *args, "-o", out)
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        for m in mentions:
            self.assertIn(m, err)
        self.assertFalse(os.path.exists(out))
        return err

    def test_bad_combinations_and_exit_statuses(self):
        base = (self.src, "-k", 3, "--metric", "euclidean")
        self.assert_usage_error(*base, "--symmetrize", mentions=["--symmetrize", "--graph"])
        self.assert_usage_error(*base, "--graph", "distance", "--symmetrize", "--query", self.qsrc,
                                mentions=["--symmetrize", "--query"])
        self.assert_usage_error(*base, "--graph", "distances",
                                mentions=["--graph", "distances", "connectivity"])
        self.assert_usage_error(*base, "--graph", "connectivity", "--exclude-self", "--query",
                                self.qsrc, mentions=["--exclude-self"])
        self.assert_usage_error(*base, "--graph", "distance", "--graph", "connectivity",
                                mentions=["--graph", "twice"])
        self.assert_usage_error(*base, "--symmetrize=yes", "--graph", "distance",
                                mentions=["--symmetrize", "no value"])
        code, _, err = run("knn", *base, "-o", self.path("g.npz"), "--graph")
        self.assertEqual(code, 2, err)
        self.assertIn("needs a value", err)
        # The extension is checked before any work: INDEX does not exist and is never opened.
        missing = self.path("missing.mtx")
        for name in ("g.npy", "g.mtx", "g"):
            with self.subTest(output=name):
                code, _, err = run("knn", missing, "-k", 3, "--metric", "euclidean", "--graph",
                                   "distance", "-o", self.path(name))
                self.assertEqual(code, 2, err)
                self.assertIn("--output", err)
                self.assertIn(".npz", err)
                self.assertNotIn("missing.mtx", err)
                self.assertFalse(os.path.exists(self.path(name)))
        # A data error (an unreadable INDEX) exits 1 and leaves nothing behind.
        bad = self.path("bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n9 9 1\n")
        out = self.path("g.npz")
        code, _, err = run("knn", bad, "-k", 1, "--metric", "euclidean", "--graph", "distance",
                           "-o", out)
        self.assertEqual(code, 1, err)
        self.assertFalse(os.path.exists(out))
        self.assertEqual([f for f in os.listdir(self.tmp) if "spira" in f], [])


if __name__ == "__main__":
    unittest.main()
