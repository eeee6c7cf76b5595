"""Small option rules of the spira tool: metric aliases, -k15, range messages, --threads, the
one-line summaries on stdout."""
import io
import os
import pty
import re
import subprocess
import unittest

import numpy as np
import scipy.io
import scipy.sparse as sp

from clitest import CLI, CliTestCase, run


class OptionsTest(CliTestCase):
    def setUp(self):
        super().setUp()
        rng = np.random.default_rng(28)
        self.a = sp.random(60, 40, density=0.2, random_state=rng, format="csr")
        self.mtx = self.path("a.mtx")
        scipy.io.mmwrite(self.mtx, self.a)

    def distances(self, metric, *extra):
        out = self.path(f"d-{metric}-{len(extra)}.npy")
        self.assert_ok("distance", self.mtx, "--metric", metric, "-o", out, *extra)
        return np.load(out)

    def knn(self, *args):
        out = self.path("g.npz")
        stdout = self.assert_ok("knn", self.mtx, "-o", out, *args)
        g = np.load(out)
        return g["indices"], g["distances"], stdout

    def test_output_format_follows_the_file_name_before_any_work(self):
        # INDEX does not exist: the output's extension is rejected before it is opened, exit 2,
        # naming --output and the format the command writes; nothing is written.
        missing = self.path("missing.mtx")
        cases = [
            (("distance", missing, "--metric", "cosine"), ["d.npz", "d.txt", "d"], ".npy"),
            (("knn", missing, "-k", 3, "--metric", "cosine"), ["g.npy", "g.mtx"], ".npz"),
            (("topk", missing, "-k", 3), ["t.npy", "t.csv"], ".npz"),
        ]
        for args, names, wanted in cases:
            for name in names:
                with self.subTest(command=args[0], output=name):
                    code, _, err = run(*args, "-o", self.path(name))
                    self.assertEqual(code, 2, err)
                    self.assertIn("--output", err)
                    self.assertIn(wanted, err)
                    self.assertNotIn("missing.mtx", err)
                    self.assertFalse(os.path.exists(self.path(name)))

    def test_aliases_give_the_canonical_distances(self):
        for alias, name in (("cityblock", "manhattan"), ("l1", "manhattan"), ("l2", "euclidean")):
            with self.subTest(alias=alias):
                np.testing.assert_array_equal(self.distances(alias), self.distances(name))
                ia, da, _ = self.knn("-k", 5, "--metric", alias)
                ib, db, _ = self.knn("-k", 5, "--metric", name)
                np.testing.assert_array_equal(ia, ib)
                np.testing.assert_array_equal(da, db)

    def test_unknown_metric_lists_the_aliases(self):
        line = self.assert_fails_clearly("distance", self.mtx, "--metric", "L1", "-o",
                                         self.path("d.npy"), mentions=["--metric", "'L1'"])
        self.assertIn("cityblock (manhattan)", line)

    def test_short_option_with_attached_value(self):
        i1, d1, _ = self.knn("-k15", "--metric=cosine")
        i2, d2, _ = self.knn("-k", "15", "--metric", "cosine")
        self.assertEqual(i1.shape, (60, 15))
        np.testing.assert_array_equal(i1, i2)
        np.testing.assert_array_equal(d1, d2)
        self.assert_fails_clearly("knn", self.mtx, "-kx", "--metric", "cosine", "-o",
                                  self.path("g.npz"), mentions=["-k", "'x'"])
        self.assert_fails_clearly("knn", self.mtx, "-zz", "-k", 2, "--metric", "cosine", "-o",
                                  self.path("g.npz"), mentions=["-zz"])

    def test_k_zero_names_the_option_and_the_range(self):
        for cmd in (["knn", self.mtx, "--metric", "cosine"], ["topk", self.path("t.npy")]):
            np.save(self.path("t.npy"), np.zeros((3, 4), dtype=np.float32))
            for k in ("0", "-k0"):
                args = [*cmd, "-o", self.path("o.npz")] + (["-k", k] if k == "0" else [k])
                code, _, err = run(*args)
                with self.subTest(cmd=cmd[0], k=k):
                    self.assertEqual(code, 2, err)
                    self.assertIn("option '-k': 0 is outside the valid range, 1 to the", err)

    def test_usage_errors_exit_2_without_internal_names(self):
        cases = [["distance", self.mtx, "--metric", "minkowski", "--p", "0.5"],
                 ["distance", self.mtx, "--metric", "cosine", "--p", "3"],
                 ["knn", self.mtx, "-k", 2, "--metric", "minkowski", "--p", "0.5"],
                 ["knn", self.mtx, "-k", 2, "--metric", "cosine", "--threads", "-1"],
                 ["topk", self.mtx, "-k", 2, "--threads", "x"]]
        for args in cases:
            ext = ".npy" if args[0] == "distance" else ".npz"
            with self.subTest(args=args):
                code, _, err = run(*args, "-o", self.path("o" + ext))
                self.assertEqual(code, 2, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertNotRegex(err, r"[a-z_]+\(|spira::|\.cpp|\.hpp")

    def test_threads_give_the_same_output(self):
        base = self.distances("euclidean")
        for n in ("1", "3", "0"):
            with self.subTest(threads=n):
                np.testing.assert_array_equal(self.distances("euclidean", "--threads", n), base)
        i0, d0, _ = self.knn("-k", 7, "--metric", "manhattan")
        i1, d1, _ = self.knn("-k", 7, "--metric", "manhattan", "--threads", 2)
        np.testing.assert_array_equal(i0, i1)
        np.testing.assert_array_equal(d0, d1)
        x = np.random.default_rng(3).standard_normal((40, 300))
        src = self.path("x.npy")
        np.save(src, x)
        outs = []
        for n in ("1", "4"):
            out = self.path(f"t{n}.npz")
            self.assert_ok("topk", src, "-k", 9, "--threads", n, "-o", out)
            outs.append(np.load(out))
        for key in ("indices", "values"):
            np.testing.assert_array_equal(outs[0][key], outs[1][key])

    def test_one_line_summaries(self):
        d = self.path("d.npy")
        out = self.assert_ok("distance", self.mtx, "--metric", "l1", "-o", d)
        self.assertRegex(out, r"^spira distance: 60 x 60 distances, manhattan, (host|cuda), "
                              r"[0-9.]+ s -> " + re.escape(d) + r"\n$")
        src = self.path("x.npy")
        np.save(src, np.ones((4, 9), dtype=np.float32))
        t = self.path("t.npz")
        out = self.assert_ok("topk", src, "-k", 3, "--smallest", "-o", t)
        self.assertRegex(out, r"^spira topk: 4 rows x 9, k = 3, smallest, (host|cuda), "
                              r"[0-9.]+ s -> " + re.escape(t) + r"\n$")
        _, _, out = self.knn("-k", 3, "--metric", "cosine")
        self.assertRegex(out, r"^spira knn: 60 queries x 60 index rows, k = 3, cosine, ")

    def test_summary_goes_to_stderr_when_the_output_is_stdout(self):
        p = subprocess.run([CLI, "distance", self.mtx, "--metric", "l2", "-o", "/dev/stdout"],
                           capture_output=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        np.testing.assert_array_equal(np.load(io.BytesIO(p.stdout)), self.distances("euclidean"))
        self.assertIn(b"spira distance: 60 x 60 distances", p.stderr)

    def test_knn_progress_on_a_terminal_shows_elapsed_time(self):
        master, slave = pty.openpty()
        try:
            p = subprocess.run([CLI, "knn", self.mtx, "-k", "3", "--metric", "cosine", "-o",
                                self.path("g.npz")], stdout=subprocess.PIPE, stderr=slave,
                               timeout=600)
            os.close(slave)
            slave = None
            err = b""
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                err += chunk
        finally:
            if slave is not None:
                os.close(slave)
            os.close(master)
        self.assertEqual(p.returncode, 0, err)
        self.assertRegex(err.decode(), r"spira knn: 60 / 60 queries \(100%\), [0-9.]+ s elapsed")


if __name__ == "__main__":
    unittest.main()
