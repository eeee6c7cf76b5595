"""spira topk against a sort-based NumPy oracle, with the documented tie and NaN rules."""
import unittest

import numpy as np

from clitest import CliTestCase


def oracle(x, k, largest):
    """Best k per row: by value (NaN worst in both directions), then by smaller index."""
    n, m = x.shape
    idx = np.empty((n, k), dtype=np.int64)
    for r in range(n):
        row = x[r]
        key = np.where(np.isnan(row), np.inf, -row if largest else row)
        order = np.lexsort((np.arange(m), key))  # last key is primary: value, then index
        idx[r] = order[:k]
    return idx, np.take_along_axis(x, idx, axis=1)


class TopkTest(CliTestCase):
    def check(self, x, k, smallest, backend="host"):
        src = self.path("in.npy")
        np.save(src, x)
        out = self.path("out.npz")
        args = ["topk", src, "-k", k, "-o", out, "--backend", backend]
        if smallest:
            args.append("--smallest")
        self.assert_ok(*args)
        got = np.load(out)
        want_idx, want_val = oracle(x, k, largest=not smallest)
        self.assertEqual(got["indices"].dtype, np.int64)
        self.assertEqual(got["values"].dtype, x.dtype)
        np.testing.assert_array_equal(got["indices"], want_idx)
        np.testing.assert_array_equal(got["values"], want_val)

    def test_random_rows_with_ties_and_nan(self):
        rng = np.random.default_rng(7)
        x = rng.integers(0, 20, size=(50, 300)).astype(np.float32)  # many ties
        x[3, ::7] = np.nan
        x[4, :] = 5.0  # all equal
        x[5, ::3] = np.inf
        x[6, ::5] = -np.inf
        for k in (1, 31, 32, 33, 300):
            for smallest in (False, True):
                with self.subTest(k=k, smallest=smallest):
                    self.check(x, k, smallest)

    def test_double_input(self):
        rng = np.random.default_rng(8)
        self.check(rng.standard_normal((20, 1000)), 100, smallest=True)

    def test_bad_arguments(self):
        src = self.path("in.npy")
        np.save(src, np.zeros((3, 4), dtype=np.float32))
        out = self.path("o.npz")
        self.assert_fails_clearly("topk", src, "-k", 5, "-o", out, mentions=["-k", "5"])
        self.assert_fails_clearly("topk", src, "-k", 0, "-o", out, mentions=["-k"])
        self.assert_fails_clearly("topk", src, "-k", "x", "-o", out, mentions=["-k", "x"])
        self.assert_fails_clearly("topk", src, "-k", 2, mentions=["--output"])
        self.assert_fails_clearly("topk", src, "-k", 2, "-o", out, "--backend", "tpu", mentions=["tpu"])
        ints = self.path("ints.npy")
        np.save(ints, np.zeros((3, 4), dtype=np.int32))
        self.assert_fails_clearly("topk", ints, "-k", 2, "-o", out, mentions=["ints.npy"])
        bad = self.path("bad.npy", "not an npy file")
        self.assert_fails_clearly("topk", bad, "-k", 2, "-o", out, mentions=["bad.npy"])


if __name__ == "__main__":
    unittest.main()
