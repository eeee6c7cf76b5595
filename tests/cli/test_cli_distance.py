"""spira distance against scipy.spatial.distance.cdist for every metric, on slices of real data.

Where scipy returns nan (all-zero or constant rows), spira returns the finite value documented in
docs/metrics.md; the oracle below applies the same documented rules. Metrics scipy lacks
(hellinger, kl_divergence, inner_product) use the formulas of docs/metrics.md in NumPy.
"""
import unittest

import numpy as np
import scipy.io
from scipy.spatial.distance import cdist

from clitest import CliTestCase, run

KL_EPSILON = 1e-10  # docs/metrics.md


def zero_rows(x):
    return ~np.any(x != 0, axis=1)


def oracle(metric, a, b):
    """Dense float64 reference for spira distance A B --metric metric."""
    za, zb = zero_rows(a)[:, None], zero_rows(b)[None, :]
    both, one = za & zb, za ^ zb
    if metric == "inner_product":
        return a @ b.T
    if metric == "hellinger":
        return np.sqrt(np.maximum(a.sum(1)[:, None] + b.sum(1)[None, :] - 2 * np.sqrt(a) @ np.sqrt(b).T, 0) / 2)
    if metric == "kl_divergence":
        out = np.zeros((len(a), len(b)))
        for i, x in enumerate(a):
            nz = x > 0
            out[i] = (x[nz] * np.log(x[nz] / np.maximum(b[:, nz], KL_EPSILON))).sum(1)
        return out
    if metric in ("dice", "russellrao", "jaccard"):  # boolean metrics: true = nonzero
        d = cdist(a != 0, b != 0, metric)
    elif metric == "manhattan":
        d = cdist(a, b, "cityblock")
    elif metric == "minkowski":
        d = cdist(a, b, "minkowski", p=3)
    else:
        d = cdist(a, b, metric)
    if metric == "cosine":
        d = np.where(both, 0.0, np.where(one, 1.0, d))
    elif metric == "correlation":
        ca = np.isclose(a.std(1), 0)[:, None]
        cb = np.isclose(b.std(1), 0)[None, :]
        d = np.where(ca & cb, 0.0, np.where(ca ^ cb, 1.0, d))
    elif metric in ("dice", "braycurtis"):
        d = np.where(both, 0.0, d)
    elif metric == "jensenshannon":
        d = np.where(both, 0.0, np.where(one, np.sqrt(np.log(2)), d))
    return d


METRICS = ["cosine", "euclidean", "sqeuclidean", "manhattan", "chebyshev", "minkowski", "canberra",
           "braycurtis", "hamming", "jaccard", "dice", "russellrao", "correlation", "jensenshannon",
           "hellinger", "kl_divergence", "inner_product"]


class DistanceTest(CliTestCase):
    def check_dataset(self, rel, a_rows, b_rows):
        m = scipy.io.mmread(self.dataset(*rel)).tocsr()
        a, b = m[a_rows].astype(np.float64), m[b_rows].astype(np.float64)
        pa, pb = self.path("a.mtx"), self.path("b.mtx")
        scipy.io.mmwrite(pa, a)
        scipy.io.mmwrite(pb, b)
        da, db = a.toarray(), b.toarray()
        for metric in METRICS:
            with self.subTest(metric=metric):
                out = self.path("d.npy")
                extra = ["--p", 3] if metric == "minkowski" else []
                # the host engine (float64, rounded once) is the one held to scipy's precision;
                # test_cuda_backend_matches_the_host compares the GPU with it
                self.assert_ok("distance", pa, pb, "--metric", metric, "-o", out, "--backend", "host", *extra)
                got = np.load(out)
                self.assertEqual(got.dtype, np.float32)
                self.assertEqual(got.shape, (a.shape[0], b.shape[0]))
                self.assertFalse(np.isnan(got).any(), "no NaN is documented for these inputs")
                want = oracle(metric, da, db)
                # float32 output: relative 2e-5, absolute 2e-5 of the largest distance in the block
                scale = max(1.0, float(np.abs(want).max()))
                np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * scale)

    def test_kos_word_counts(self):
        self.check_dataset(("uci-bow-kos", "docword.kos.mtx.gz"), slice(0, 120), slice(120, 300))

    def test_sec_edgar_with_empty_rows(self):
        m = scipy.io.mmread(self.dataset("sec-edgar-names", "char3gram_tfidf.mtx.gz")).tocsr()
        empty = np.flatnonzero(np.diff(m.indptr) == 0)
        self.assertGreater(len(empty), 0)
        rows = np.concatenate([empty[:5], np.arange(200)])
        self.check_dataset(("sec-edgar-names", "char3gram_tfidf.mtx.gz"), rows, np.arange(100, 400))

    def test_cuda_backend_matches_the_host(self):
        """Every metric and every strategy the CUDA engine supports, against the host result."""
        m = scipy.io.mmread(self.dataset("uci-bow-kos", "docword.kos.mtx.gz")).tocsr()
        a, b = self.path("a.mtx"), self.path("b.mtx")
        scipy.io.mmwrite(a, m[:200])
        scipy.io.mmwrite(b, m[200:450])
        code, _, err = run("distance", a, b, "--metric", "cosine", "--backend", "cuda",
                           "-o", self.path("probe.npy"))
        if code != 0 and ("no CUDA device" in err or "without CUDA" in err):
            self.skipTest(err.strip())
        for metric in METRICS:
            extra = ["--p", 3] if metric == "minkowski" else []
            host = self.path("host.npy")
            self.assert_ok("distance", a, b, "--metric", metric, "-o", host, "--backend", "host", *extra)
            want = np.load(host).astype(np.float64)
            scale = max(1.0, float(np.abs(want).max()))
            for strategy in ("automatic", "intersection", "hybrid", "dense"):
                out = self.path("cuda.npy")
                code, _, err = run("distance", a, b, "--metric", metric, "-o", out, "--backend", "cuda",
                                   "--strategy", strategy, *extra)
                if code != 0 and "cannot evaluate metric" in err:
                    continue  # e.g. dense tiles only serve dot-product-expanded metrics
                with self.subTest(metric=metric, strategy=strategy):
                    self.assertEqual(code, 0, err)
                    # float32 on the GPU against float64 rounded once on the host
                    np.testing.assert_allclose(np.load(out), want, rtol=1e-4, atol=1e-4 * scale)

    def test_a_against_itself(self):
        m = scipy.io.mmread(self.dataset("uci-bow-kos", "docword.kos.mtx.gz")).tocsr()[:80]
        p = self.path("a.mtx")
        scipy.io.mmwrite(p, m)
        out = self.path("d.npy")
        self.assert_ok("distance", p, "--metric", "euclidean", "-o", out)
        got = np.load(out)
        np.testing.assert_allclose(got, cdist(m.toarray(), m.toarray()), rtol=2e-5, atol=2e-4)

    def test_bad_arguments(self):
        p = self.path("a.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n")
        q = self.path("b.mtx", "%%MatrixMarket matrix coordinate real general\n2 4 1\n1 1 1\n")
        neg = self.path("n.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 -1\n")
        out = self.path("d.npy")
        self.assert_fails_clearly("distance", p, q, "--metric", "cosine", "-o", out, mentions=["columns"])
        self.assert_fails_clearly("distance", p, "--metric", "cosinus", "-o", out, mentions=["cosinus"])
        self.assert_fails_clearly("distance", p, "--metric", "minkowski", "--p", "0.5", "-o", out, mentions=["0.5"])
        self.assert_fails_clearly("distance", p, "--metric", "cosine", "--p", "3", "-o", out, mentions=["--p"])
        self.assert_fails_clearly("distance", neg, "--metric", "hellinger", "-o", out, mentions=["negative"])
        self.assert_fails_clearly("distance", p, "--metric", "cosine", mentions=["--output"])


if __name__ == "__main__":
    unittest.main()
