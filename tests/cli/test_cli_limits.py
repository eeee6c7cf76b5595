"""The CLI's guarantees about memory, outputs and messages (docs/cli.md, "Memory", "Outputs",
"Messages"): distance streams its rows under --memory-budget-mb with the same result, a failed write
leaves nothing behind, the output is checked before the work, usage errors exit 2 naming the option,
bad values are reported at the user's row, bytes that are not UTF-8 are escaped."""
import os
import resource
import signal
import struct
import subprocess
import sys
import time
import unittest
import zlib

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from clitest import CLI, CliTestCase, run


def random_csr(rows, cols, per_row, seed, nonneg=True):
    rng = np.random.default_rng(seed)
    r = np.repeat(np.arange(rows), per_row)
    c = rng.integers(0, cols, rows * per_row)
    v = rng.random(rows * per_row) + 0.1
    if not nonneg:
        v -= 0.6
    m = sp.csr_matrix((v, (r, c)), shape=(rows, cols))
    m.sum_duplicates()
    return m


# A bare interpreter forks and execs the tool and reports wait4's peak resident size: the test's own
# process (numpy, scipy) would count in the child's high-water mark otherwise (exec records it).
PEAK_RSS = """
import os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def raw_peak_rss_kib(*args):
    """Runs the tool; returns (exit status, peak resident memory of that process in KiB)."""
    p = subprocess.run([sys.executable, "-S", "-c", PEAK_RSS, CLI, *map(str, args)],
                       capture_output=True, text=True, check=True)
    code, rss = p.stdout.split()
    return int(code), int(rss)


_startup_kib = []


def peak_rss_kib(*args):
    """Runs the tool; returns (exit status, peak resident memory in KiB above the tool's own
    start-up, `spira --version`: the libraries it links, such as the CUDA runtime and cuBLAS of a
    CUDA build, take a fixed 200 MB or more that no data causes)."""
    if not _startup_kib:
        _startup_kib.append(raw_peak_rss_kib("--version")[1])
    code, rss = raw_peak_rss_kib(*args)
    return code, max(0, rss - _startup_kib[0])


def stored_zip(members):
    """A stored zip of (name bytes, data bytes): raw names, which zipfile would not write."""
    out, central = b"", b""
    for name, data in members:
        crc = zlib.crc32(data)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0x21, crc,
                               len(data), len(data), len(name), 0, 0, 0, 0, 0, len(out)) + name
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0x21, crc, len(data),
                           len(data), len(name), 0) + name + data
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central),
                       len(out), 0)
    return out + central + eocd


def slow_job(case, a_rows=60):
    """A and B where 1 MiB holds one row of distances (87,000 rows of B), so every row of A is one
    call that builds the column form of B (5,000,000 columns): estimated 40x, measured ~60x
    slower than one block (several seconds)."""
    rng = np.random.default_rng(5)
    n, cols = 87_000, 5_000_000
    b = sp.csr_matrix((rng.random(n) + 0.1, (np.arange(n), rng.integers(0, cols, n))),
                      shape=(n, cols))
    a = sp.csr_matrix((rng.random(a_rows) + 0.1,
                       (np.arange(a_rows), rng.integers(0, cols, a_rows))), shape=(a_rows, cols))
    pa, pb = case.path("a.npz"), case.path("b.npz")
    sp.save_npz(pa, a)
    sp.save_npz(pb, b)
    return pa, pb


class DistanceBudget(CliTestCase):
    def test_streamed_blocks_equal_one_block(self):
        a = random_csr(700, 60, 8, 1)
        b = random_csr(3000, 60, 8, 2)
        pa, pb = self.path("a.npz"), self.path("b.npz")
        sp.save_npz(pa, a)
        sp.save_npz(pb, b)
        for metric in ("euclidean", "cosine", "manhattan"):
            whole, blocks = self.path("whole.npy"), self.path("blocks.npy")
            self.assert_ok("distance", pa, pb, "--metric", metric, "-o", whole, "--backend", "host",
                           "--memory-budget-mb", 4096)
            # 1 MiB holds 29 rows of 3,000 float64 + float32 values: 25 blocks.
            self.assert_ok("distance", pa, pb, "--metric", metric, "-o", blocks, "--backend",
                           "host", "--memory-budget-mb", 1)
            w, s = np.load(whole), np.load(blocks)
            self.assertEqual(s.shape, (700, 3000))
            self.assertEqual(s.dtype, np.float32)
            np.testing.assert_array_equal(s, w)
            ref = cdist(a.toarray(), b.toarray(), "cityblock" if metric == "manhattan" else metric)
            np.testing.assert_allclose(s, ref, rtol=1e-5, atol=1e-5)
        # B = A, the default budget.
        self.assert_ok("distance", pa, "--metric", "euclidean", "-o", whole)
        self.assert_ok("distance", pa, "--metric", "euclidean", "-o", blocks,
                       "--memory-budget-mb", 1)
        np.testing.assert_array_equal(np.load(blocks), np.load(whole))

    def test_peak_memory_stays_below_the_output(self):
        a = random_csr(4000, 40, 4, 3)
        pa = self.path("a.npz")
        sp.save_npz(pa, a)
        out = self.path("d.npy")
        output_kib = 4000 * 4000 * 4 // 1024  # 62.5 MiB of float32
        code, rss = peak_rss_kib("distance", pa, "--metric", "euclidean", "-o", out,
                                 "--backend", "host", "--memory-budget-mb", 4)
        self.assertEqual(code, 0)
        self.assertEqual(np.load(out, mmap_mode="r").shape, (4000, 4000))
        self.assertLess(rss, output_kib // 2, f"peak {rss} KiB with a 4 MiB budget")

    def test_budget_below_one_row_is_a_usage_error(self):
        # Ten query rows against 100,000: one row of distances outgrows 1 MiB, while the whole
        # output (4 MB) fits any disk, so the budget is what the message is about.
        b = random_csr(100_000, 5, 1, 4)
        pa, pb = self.path("a.npz"), self.path("b.npz")
        sp.save_npz(pa, b[:10])
        sp.save_npz(pb, b)
        line = self.assert_fails_clearly("distance", pa, pb, "--metric", "euclidean", "-o",
                                         self.path("d.npy"), "--backend", "host",
                                         "--memory-budget-mb", 1, mentions=["--memory-budget-mb"])
        self.assertEqual(run("distance", pa, pb, "--metric", "euclidean", "-o",
                             self.path("d.npy"), "--backend", "host", "--memory-budget-mb", 1)[0],
                         2)
        self.assertNotIn("::", line)

    def test_a_budget_that_makes_the_job_30x_slower_warns(self):
        pa, pb = slow_job(self)
        out = self.path("d.npy")
        code, _, err = run("distance", pa, pb, "--metric", "euclidean", "-o", out, "--backend",
                           "host", "--memory-budget-mb", 1)
        self.assertEqual(code, 0, err)
        self.assertIn("warning", err)
        self.assertIn("slower", err)
        self.assertIn("--memory-budget-mb", err)
        code, _, err = run("distance", pa, pb, "--metric", "euclidean", "-o", out, "--backend",
                           "host")
        self.assertEqual(code, 0, err)
        self.assertNotIn("warning", err)


class KnnMemory(CliTestCase):
    def test_self_query_holds_one_copy_of_the_result(self):
        # 12,000 x 300 neighbours: 43 MB of int64 indices and float32 distances. The self-query
        # merges each point into the exclude-self graph in place; a second copy would peak above
        # twice that.
        n, k = 12_000, 300
        x = self.path("x.npz")
        sp.save_npz(x, random_csr(n, 30, 4, 11))
        result_kib = n * k * 12 // 1024
        out = self.path("g.npz")
        code, rss = peak_rss_kib("knn", x, "-k", k, "--metric", "euclidean", "-o", out,
                                 "--backend", "host", "--memory-budget-mb", 4)
        self.assertEqual(code, 0)
        self.assertLess(rss, result_kib * 3 // 2, f"peak {rss} KiB for a {result_kib} KiB result")
        g = np.load(out)
        self.assertEqual(g["indices"].shape, (n, k))
        # Each point is its own first neighbour unless an exact duplicate has a smaller index.
        self.assertTrue(np.all(g["distances"][:, 0] == 0))


class ContainerLimit(CliTestCase):
    """The default budgets follow the cgroup memory limit the tool runs under (Docker, Kubernetes,
    Slurm): a child cgroup of 300 MB (cgroup v1 memory controller, as root); skipped where none can
    be made. With the old default (a quarter of physical memory) knn was killed there."""

    LIMIT = 300 << 20

    def setUp(self):
        super().setUp()
        root = "/sys/fs/cgroup/memory"
        if os.geteuid() != 0 or not os.path.isfile(os.path.join(root, "memory.limit_in_bytes")):
            self.skipTest("needs root and the cgroup v1 memory controller")
        self.cgroup = os.path.join(root, f"spira-test-{os.getpid()}")
        try:
            os.mkdir(self.cgroup)
            with open(os.path.join(self.cgroup, "memory.limit_in_bytes"), "w") as f:
                f.write(str(self.LIMIT))
        except OSError as e:
            self.skipTest(f"cannot make a memory cgroup: {e}")

    def tearDown(self):
        try:
            os.rmdir(self.cgroup)
        except OSError:
            pass
        super().tearDown()

    def run_contained(self, *args):
        """Runs the tool inside the cgroup; returns (exit status, stderr)."""
        procs = os.path.join(self.cgroup, "cgroup.procs")

        def enter():
            with open(procs, "w") as f:
                f.write(str(os.getpid()))

        p = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=600,
                           preexec_fn=enter)
        return p.returncode, p.stderr

    def test_knn_and_distance_fit_the_limit_by_default(self):
        x = self.path("x.npz")
        sp.save_npz(x, random_csr(20_000, 2_000, 30, 21))
        out = self.path("g.npz")
        code, err = self.run_contained("knn", x, "-k", 15, "--metric", "euclidean", "--backend",
                                       "host", "-o", out)
        self.assertEqual(code, 0, f"knn under a 300 MB cgroup: status {code}, {err}")
        self.assertEqual(np.load(out)["indices"].shape, (20_000, 15))
        # distance: 6,000 x 6,000 float32 (144 MB) would be 432 MB with its float64 tile at once.
        a = self.path("a.npz")
        sp.save_npz(a, random_csr(6_000, 2_000, 30, 22))
        d = self.path("d.npy")
        code, err = self.run_contained("distance", a, "--metric", "euclidean", "--backend", "host",
                                       "-o", d)
        self.assertEqual(code, 0, f"distance under a 300 MB cgroup: status {code}, {err}")
        got = np.load(d, mmap_mode="r")
        rows = sp.load_npz(a)[:50].toarray()
        np.testing.assert_allclose(got[:50, :50], cdist(rows, rows), rtol=1e-5, atol=1e-5)


class Outputs(CliTestCase):
    def setUp(self):
        super().setUp()
        self.a = self.path("a.npz")
        sp.save_npz(self.a, random_csr(200, 30, 5, 6))
        self.mounted = None

    def tearDown(self):
        if self.mounted:
            subprocess.run(["umount", self.mounted], check=False)
        super().tearDown()

    def mount_tmpfs(self, options):
        d = self.path("mnt")
        os.mkdir(d)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", d],
                           capture_output=True, text=True)
        if p.returncode != 0:
            self.skipTest(f"cannot mount a tmpfs here: {p.stderr.strip()}")
        self.mounted = d
        return d

    def test_full_device(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        line = self.assert_fails_clearly("distance", self.a, "--metric", "cosine", "-o",
                                         "/dev/full", mentions=["/dev/full", "No space left"])
        self.assertEqual(run("knn", self.a, "-k", 3, "--metric", "cosine", "-o", "/dev/full")[0], 1)
        self.assertNotIn("::", line)

    def test_full_filesystem_is_found_before_the_work(self):
        d = self.mount_tmpfs("size=64k")
        old = os.path.join(d, "d.npy")
        with open(old, "wb") as f:
            f.write(b"previous result")
        # 200 x 200 float32 = 160 KB into 64 KB; a k-NN graph of 200 x 150 (360 KB).
        for args in (("distance", self.a, "--metric", "cosine", "-o", old),
                     ("distance", self.a, "--metric", "cosine", "-o", os.path.join(d, "new.npy"),
                      "--memory-budget-mb", 1),
                     ("knn", self.a, "-k", 150, "--metric", "cosine", "-o",
                      os.path.join(d, "g.npz"))):
            self.assert_fails_clearly(*args, mentions=["not enough space", "bytes free"])
            self.assertEqual(sorted(os.listdir(d)), ["d.npy"], args)
            with open(old, "rb") as f:
                self.assertEqual(f.read(), b"previous result")

    def test_a_write_failing_midway_leaves_nothing_behind(self):
        # A file size limit of 64 KiB: the write fails after the first blocks (EFBIG), as a disk
        # filling up during the run would.
        def limit():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))

        d = self.path("out")
        os.mkdir(d)
        old = os.path.join(d, "d.npy")
        with open(old, "wb") as f:
            f.write(b"previous result")
        for args in (("distance", self.a, "--metric", "cosine", "-o", old, "--memory-budget-mb", 1),
                     ("distance", self.a, "--metric", "cosine", "-o", os.path.join(d, "n.npy")),
                     ("knn", self.a, "-k", 150, "--metric", "cosine", "-o",
                      os.path.join(d, "g.npz"))):
            p = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True,
                               preexec_fn=limit)
            self.assertEqual(p.returncode, 1, p.stderr)
            lines = p.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertIn("write error: File too large", lines[0])
            self.assertIn(args[args.index("-o") + 1], lines[0])
            self.assertEqual(sorted(os.listdir(d)), ["d.npy"], args)
            with open(old, "rb") as f:
                self.assertEqual(f.read(), b"previous result")

    def test_interrupted_run_leaves_nothing_behind(self):
        out_dir = self.path("out")
        os.mkdir(out_dir)
        out = os.path.join(out_dir, "d.npy")
        for sig in (signal.SIGTERM, signal.SIGINT):
            # The poll below can be starved on a loaded machine (ctest -j) until the run is over:
            # then the run must have succeeded, and a longer one is tried.
            for a_rows in (400, 1600, 6400):
                pa, pb = slow_job(self, a_rows=a_rows)
                with open(self.path("stderr.txt"), "w") as err:
                    p = subprocess.Popen([CLI, "distance", pa, pb, "--metric", "euclidean", "-o",
                                          out, "--backend", "host", "--memory-budget-mb", "1"],
                                         stdout=subprocess.DEVNULL, stderr=err)
                deadline = time.monotonic() + 60
                while not os.listdir(out_dir) and p.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.02)
                if any(n.startswith(".d.npy.spira-") for n in os.listdir(out_dir)):
                    break
                self.assertEqual(p.wait(timeout=600), 0, open(self.path("stderr.txt")).read())
                for name in os.listdir(out_dir):
                    os.remove(os.path.join(out_dir, name))
            else:
                self.fail("no temporary file while writing, in runs of 400 to 6,400 rows")
            p.send_signal(sig)
            self.assertEqual(p.wait(timeout=60), -sig)
            self.assertEqual(os.listdir(out_dir), [])

    def test_read_only_directory_is_refused_before_the_work(self):
        d = self.mount_tmpfs("size=64k,ro")
        out = os.path.join(d, "d.npy")
        self.assert_fails_clearly("distance", self.a, "--metric", "cosine", "-o", out,
                                  mentions=["--output", out, "Read-only"])
        self.assertEqual(run("distance", self.a, "--metric", "cosine", "-o", out)[0], 2)

    def test_output_names_checked_before_the_work(self):
        cases = [
            (("distance", self.a, "--metric", "cosine", "-o", ""), ["--output", "empty"]),
            (("distance", self.a, "--metric", "cosine", "-o", self.path("d.mtx")),
             ["--output", "d.mtx", ".npy"]),
            (("knn", self.a, "-k", 3, "--metric", "cosine", "-o", self.path("g.npy")),
             ["--output", ".npz"]),
            (("topk", self.path("x.npy"), "-k", 3, "-o", self.path("t.txt")), ["--output", ".npz"]),
            (("distance", self.a, "--metric", "cosine", "-o", self.tmp), ["--output", "directory"]),
            (("distance", self.a, "--metric", "cosine", "-o", self.path("nodir/d.npy")),
             ["--output", "does not exist"]),
        ]
        for args, mentions in cases:
            self.assert_fails_clearly(*args, mentions=mentions)
            self.assertEqual(run(*args)[0], 2, args)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["a.npz"])
        # The extension is not case-sensitive; a successful write leaves only the output.
        self.assert_ok("distance", self.a, "--metric", "cosine", "-o", self.path("D.NPY"))
        self.assertEqual(sorted(os.listdir(self.tmp)), ["D.NPY", "a.npz"])


class Messages(CliTestCase):
    def assert_usage(self, *args, mentions=()):
        line = self.assert_fails_clearly(*args, mentions=mentions)
        self.assertEqual(run(*args)[0], 2, line)
        self.assertNotIn("::", line)
        self.assertNotIn("spira::", line)
        return line

    def test_options_are_named_with_status_2(self):
        a = self.path("a.npz")
        sp.save_npz(a, random_csr(50, 10, 3, 7))
        out, g = self.path("d.npy"), self.path("g.npz")
        self.assert_usage("distance", a, "--metric", "minkowski", "--p", "0.5", "-o", out,
                          mentions=["--p", "0.5"])
        self.assert_usage("knn", a, "-k", 3, "--metric", "minkowski", "--p", "0.25", "-o", g,
                          mentions=["--p", "0.25"])
        self.assert_usage("distance", a, "--metric", "cosinus", "-o", out,
                          mentions=["--metric", "cosinus"])
        self.assert_usage("knn", a, "-k", 3, "--metric", "cosinus", "-o", g,
                          mentions=["--metric", "cosinus"])

    def test_knn_budget_too_small_names_the_option(self):
        x = self.path("x.npz")
        sp.save_npz(x, random_csr(40_000, 8, 1, 8))
        # k = 30,000: three top-k lists of one query take 1.4 MB, more than 1 MiB.
        line = self.assert_usage("knn", x, "-k", 30_000, "--metric", "euclidean", "-o",
                                 self.path("g.npz"), "--backend", "host", "--memory-budget-mb", 1,
                                 mentions=["--memory-budget-mb"])
        self.assertNotIn("knn_params", line)

    def test_negative_value_at_the_users_row(self):
        m = random_csr(20_000, 30, 3, 9).tolil()
        m[15000, 3] = -7
        x = self.path("x.npz")
        sp.save_npz(x, m.tocsr())
        good = self.path("good.npz")
        sp.save_npz(good, random_csr(20_000, 30, 3, 10))
        # Small tiles (1 MiB): the value lies in a tile starting far from row 0.
        for args in (("knn", x, "-k", 3, "--metric", "hellinger", "-o", self.path("g.npz"),
                      "--memory-budget-mb", 1),
                     ("knn", good, "--query", x, "-k", 3, "--metric", "jensenshannon", "-o",
                      self.path("g.npz"), "--memory-budget-mb", 1),
                     ("distance", good, x, "--metric", "kl_divergence", "-o", self.path("d.npy"),
                      "--memory-budget-mb", 1)):
            line = self.assert_fails_clearly(*args, mentions=[x, "row 15000", "column 3", "-7"])
            self.assertNotIn("::", line)
            self.assertNotIn(" A ", line)

    def test_coo_and_dia_archives_say_save_as_csr_or_csc(self):
        for fmt in ("coo", "dia"):
            p = self.path(f"{fmt}.npz")
            sp.save_npz(p, sp.random(6, 5, density=0.5, format=fmt, random_state=1))
            self.assert_fails_clearly("info", p, mentions=[p, f"'{fmt}'", "CSR or CSC"])
            self.assert_fails_clearly("knn", p, "-k", 2, "--metric", "cosine", "-o",
                                      self.path("g.npz"), mentions=["CSR or CSC"])

    def test_bytes_that_are_not_utf8_are_escaped(self):
        p = self.path("odd.npz")
        with open(p, "wb") as f:
            f.write(stored_zip([(b"\xff\xfe\x1b[31m.npy", b"junk")]))
        proc = subprocess.run([CLI, "info", p], capture_output=True)
        self.assertEqual(proc.returncode, 1)
        err = proc.stderr
        err.decode("utf-8")  # valid UTF-8
        self.assertNotIn(b"\xff", err)
        self.assertNotIn(b"\x1b", err)
        self.assertIn(b"\\xff\\xfe\\x1b[31m.npy", err)
        self.assertEqual(len(err.strip().splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
