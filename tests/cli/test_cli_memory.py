"""Memory follows the data, not the declared shape (docs/io.md, docs/metrics.md).

Files that declare far more columns than they use (a Matrix Market header of 2^31 columns, svmlight
files with hashed feature ids) go through `spira distance` and `spira knn`, and a file that declares
2^27 rows through `spira info`, each under an address-space limit of about 2 GB (ulimit -v 2000000).
Before the engines renumbered the used columns, the column-sized arrays took 17-23 GB and the
tools failed with "out of memory" (or were killed); `info` peaked at 3.3 GB.

The answers are checked against scipy's cdist on the dense rows over the used columns only. The
metrics that count every coordinate (hamming, correlation) are rescaled to the declared dimension
in closed form: hamming's mismatches are divided by the declared count, and correlation's centred
sums subtract the products of the row sums divided by it.
"""
import os
import resource
import subprocess
import unittest

import numpy as np
from scipy.spatial.distance import cdist

from clitest import CLI, CliTestCase

# Address space the tool may map for its work, in bytes (the shell's ulimit -v 2000000, in KiB),
# on top of what it maps before reading any input (startup_address_space).
LIMIT = 2_000_000 * 1024
_startup = []


def startup_address_space():
    """Bytes of address space the tool needs to start at all (`spira --version`): the libraries it
    links (a CUDA build maps the CUDA runtime and cuBLAS, several hundred MB). Found by bisection
    on RLIMIT_AS, to 16 MiB."""
    if not _startup:
        env = dict(os.environ, OMP_NUM_THREADS="2", MALLOC_ARENA_MAX="2")

        def starts(limit):
            def limit_memory():
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            p = subprocess.run([CLI, "--version"], capture_output=True, timeout=60,
                               preexec_fn=limit_memory, env=env)
            return p.returncode == 0

        lo, hi = 0, 64 << 30
        while hi - lo > 16 << 20:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if starts(mid) else (mid, hi)
        _startup.append(hi)
    return _startup[0]


def run_limited(*args, limit=LIMIT):
    """Runs the tool with RLIMIT_AS = its start-up address space + limit; returns (exit status,
    stdout, stderr). Two OpenMP threads and two malloc arenas keep the address space of thread
    stacks and arenas small on machines with many cores."""
    total = startup_address_space() + limit

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (total, total))

    env = dict(os.environ, OMP_NUM_THREADS="2", MALLOC_ARENA_MAX="2")
    p = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=600,
                       preexec_fn=limit_memory, env=env)
    return p.returncode, p.stdout, p.stderr


def padded_distances(metric, a, b, dim):
    """cdist on rows over the used columns, as if they had dim - a.shape[1] more zero columns."""
    if metric == "hamming":
        return cdist(a, b, "hamming") * a.shape[1] / dim
    if metric == "correlation":
        sa, sb = a.sum(1), b.sum(1)
        xy = a @ b.T - np.outer(sa, sb) / dim
        xx = (a * a).sum(1) - sa * sa / dim
        yy = (b * b).sum(1) - sb * sb / dim
        with np.errstate(divide="ignore", invalid="ignore"):
            d = 1 - xy / np.sqrt(np.outer(xx, yy))
        # A row with a zero coordinate is constant only when it is all zero (docs/metrics.md).
        za, zb = (~a.any(1))[:, None], (~b.any(1))[None, :]
        return np.clip(np.where(za & zb, 0.0, np.where(za ^ zb, 1.0, d)), 0, 2)
    if metric == "manhattan":
        return cdist(a, b, "cityblock")
    return cdist(a, b, metric)


class WideFilesTest(CliTestCase):
    # Rows over 5 used columns of a 2^31-column Matrix Market file (1-based column ids).
    USED = [1, 2, 5, 1 << 30, 1 << 31]
    ROWS = np.array([[1.0, 0.0, 1.5, 0.0, 0.0],
                     [0.0, 0.0, 0.0, 0.0, 2.0],
                     [0.0, 0.0, 3.0, 0.0, 0.0],
                     [0.5, 2.0, 0.0, 1.0, 1.0],
                     [1.0, 0.0, 1.0, 0.0, 0.25]])
    METRICS = ["euclidean", "cosine", "manhattan", "chebyshev", "hamming", "correlation"]

    def mtx(self, name, rows, used, dim):
        lines = [f"{i + 1} {used[c]} {float(v)!r}" for i, r in enumerate(rows) for c, v in enumerate(r)
                 if v != 0]
        header = f"%%MatrixMarket matrix coordinate real general\n{len(rows)} {dim} {len(lines)}\n"
        return self.path(name, header + "\n".join(lines) + "\n")

    def svm(self, name, rows, used):
        lines = [" ".join(["1"] + [f"{used[c]}:{float(v)!r}" for c, v in enumerate(r) if v != 0])
                 for r in rows]
        return self.path(name, "\n".join(lines) + "\n")

    def check_distance(self, path, rows, dim, b_path=None, b_rows=None):
        """spira distance A [B] for every metric, A (and B) the dense rows `rows` (`b_rows`)."""
        for metric in self.METRICS:
            out = self.path(f"d_{metric}.npy")
            args = ["distance", path] + ([b_path] if b_path else []) + \
                   ["--metric", metric, "-o", out]
            code, _, err = run_limited(*args)
            self.assertEqual(code, 0, f"spira {' '.join(args)} under ulimit -v 2000000: {err}")
            want = padded_distances(metric, rows, rows if b_rows is None else b_rows, dim)
            np.testing.assert_allclose(np.load(out), want, rtol=1e-6, atol=1e-6,
                                       err_msg=f"{path} {metric}")

    def check_knn(self, path, rows, dim, k=2):
        for metric in self.METRICS:
            out = self.path(f"k_{metric}.npz")
            args = ["knn", path, "-k", k, "--metric", metric, "--exclude-self", "-o", out]
            code, _, err = run_limited(*args)
            self.assertEqual(code, 0, f"spira {' '.join(map(str, args))} under ulimit -v 2000000: "
                                      f"{err}")
            d = padded_distances(metric, rows, rows, dim)
            np.fill_diagonal(d, np.inf)
            with np.load(out) as z:
                got_i, got_d = z["indices"], z["distances"]
            # Each reported neighbour lies at its exact distance, and nothing unreported is
            # better than the k-th (ties within float rounding may pick either index).
            kth = np.sort(d, axis=1)[:, k - 1]
            for r in range(len(rows)):
                self.assertNotIn(r, got_i[r], f"{metric} row {r} lists itself")
                np.testing.assert_allclose(got_d[r], d[r, got_i[r]], rtol=1e-6, atol=1e-6,
                                           err_msg=f"{path} {metric} row {r}")
                self.assertTrue(np.all(d[r, got_i[r]] <= kth[r] + 1e-6), f"{metric} row {r}")

    def test_matrix_market_declaring_two_to_the_31_columns(self):
        dim = 1 << 31
        path = self.mtx("wide.mtx", self.ROWS, self.USED, dim)
        self.check_distance(path, self.ROWS, dim)
        self.check_knn(path, self.ROWS, dim)

    def test_the_70_byte_reproducer(self):
        path = self.path("e.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                  "2 2147483648 2\n1 1 1\n2 2147483648 2\n")
        out = self.path("d.npy")
        code, _, err = run_limited("distance", path, "--metric", "euclidean", "-o", out)
        self.assertEqual(code, 0, err)
        np.testing.assert_allclose(np.load(out), [[0, np.sqrt(5)], [np.sqrt(5), 0]], rtol=1e-6)
        code, _, err = run_limited("knn", path, "-k", 1, "--metric", "euclidean", "-o",
                                   self.path("k.npz"))
        self.assertEqual(code, 0, err)

    def test_svmlight_with_hashed_feature_ids(self):
        # One-based ids up to 2^31 (int32 column indices) and up to 2^40 (int64 column indices).
        for top in (1 << 31, 1 << 40):
            used = [3, 1 << 20, 2147483648, top // 2 + 7, top] if top > 1 << 31 else \
                   [3, 1 << 20, 1 << 30, 2147483647, 2147483648]
            with self.subTest(top=top):
                path = self.svm(f"hashed_{top}.svm", self.ROWS, used)
                self.check_distance(path, self.ROWS, top)
                self.check_knn(path, self.ROWS, top)

    def test_query_file_against_a_wide_index(self):
        dim = 1 << 31
        index = self.mtx("index.mtx", self.ROWS, self.USED, dim)
        queries = self.ROWS[[1, 3]] * 2
        qpath = self.mtx("queries.mtx", queries, self.USED, dim)
        self.check_distance(qpath, queries, dim, b_path=index, b_rows=self.ROWS)
        out = self.path("q.npz")
        code, _, err = run_limited("knn", index, "--query", qpath, "-k", 3, "--metric", "cosine",
                                   "-o", out)
        self.assertEqual(code, 0, err)
        d = padded_distances("cosine", queries, self.ROWS, dim)
        with np.load(out) as z:
            np.testing.assert_allclose(z["distances"], np.sort(d, axis=1)[:, :3], rtol=1e-6,
                                       atol=1e-6)


class TallFileTest(CliTestCase):
    def test_info_on_a_file_declaring_two_to_the_27_rows(self):
        # The row pointers alone take 1 GiB; reading and describing the file keeps one such array.
        rows = 1 << 27
        path = self.path("tall.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                     f"{rows} 3 3\n1 1 1.0\n{rows} 3 2.0\n{rows} 1 1.0\n")
        code, out, err = run_limited("info", path)
        self.assertEqual(code, 0, f"spira info under ulimit -v 2000000: {err}")
        self.assertIn(f"rows: {rows}\n", out)
        self.assertIn("nnz: 3\n", out)
        self.assertIn("row degree min / median / max: 0 / 0 / 2\n", out)
        self.assertIn(f"empty rows: {rows - 2}\n", out)

    def test_info_on_npz_files_declaring_two_to_the_27_rows(self):
        # scipy.sparse.save_npz of a 2^27 x 3 matrix with 3 entries: 0.5 MB (CSR, whose indptr
        # holds 2^27 + 1 int32 entries) and 1 KB (CSC).
        import scipy.sparse
        rows = 1 << 27
        m = scipy.sparse.csr_matrix(([1.0, 2.0, 1.0], ([0, rows - 1, rows - 1], [0, 2, 0])),
                                    shape=(rows, 3))
        for fmt, matrix in (("csr", m), ("csc", m.tocsc())):
            with self.subTest(format=fmt):
                path = self.path(f"tall_{fmt}.npz")
                scipy.sparse.save_npz(path, matrix, compressed=True)
                code, out, err = run_limited("info", path)
                self.assertEqual(code, 0, f"spira info {fmt} under ulimit -v 2000000: {err}")
                self.assertIn(f"rows: {rows}\n", out)
                self.assertIn("nnz: 3\n", out)
                self.assertIn("row degree min / median / max: 0 / 0 / 2\n", out)


if __name__ == "__main__":
    unittest.main()
