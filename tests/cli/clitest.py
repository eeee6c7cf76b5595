"""Shared helpers for the CLI tests: run the spira tool and check its contract."""
import os
import subprocess
import tempfile
import unittest

CLI = os.environ.get("SPIRA_CLI", "spira")
DATA = os.environ.get("SPIRA_DATA", os.path.join(os.path.dirname(__file__), "../../../shared/data"))


def run(*args, timeout=600):
    """Runs the tool; returns (exit status, stdout, stderr)."""
    p = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


class CliTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name, content=None, mode="w"):
        p = os.path.join(self.tmp, name)
        if content is not None:
            with open(p, mode) as f:
                f.write(content)
        return p

    def assert_ok(self, *args):
        code, out, err = run(*args)
        self.assertEqual(code, 0, f"spira {' '.join(map(str, args))} failed: {err}")
        return out

    def assert_fails_clearly(self, *args, mentions=()):
        """Non-zero exit (not a signal), exactly one line on stderr, naming what it should."""
        code, out, err = run(*args)
        self.assertGreater(code, 0, f"expected an error exit, got {code}; stderr: {err!r}")
        self.assertLess(code, 128, f"crashed with status {code}; stderr: {err!r}")
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, f"expected one line on stderr, got: {err!r}")
        for m in mentions:
            self.assertIn(str(m), lines[0])
        return lines[0]

    def dataset(self, *parts):
        p = os.path.join(DATA, *parts)
        if not os.path.exists(p):
            self.skipTest(f"shared dataset not found: {p}")
        return p
