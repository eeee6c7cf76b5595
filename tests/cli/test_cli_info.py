"""spira info: the summary of real files, and one clear error line for every kind of bad input."""
import gzip
import os
import unittest

from clitest import CliTestCase, run


def field(out, name):
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == name:
            return value.strip()
    raise AssertionError(f"no '{name}' in output:\n{out}")


class InfoTest(CliTestCase):
    def test_small_matrix_market_by_hand(self):
        # rows: {0: 2 entries, 1: empty, 2: 1 entry}; degrees sorted 0,1,2 -> median 1
        p = self.path("a.mtx", "%%MatrixMarket matrix coordinate real general\n"
                      "% comment\n3 4 3\n1 1 1.5\n1 3 2\n3 4 -1\n")
        out = self.assert_ok("info", p)
        self.assertEqual(field(out, "rows"), "3")
        self.assertEqual(field(out, "cols"), "4")
        self.assertEqual(field(out, "nnz"), "3")
        self.assertEqual(field(out, "empty rows"), "1")
        self.assertTrue(field(out, "density").startswith("0.25"))
        self.assertEqual(field(out, "row degree min / median / max"), "0 / 1 / 2")
        self.assertIn("matrix-market", field(out, "format"))

    def test_shared_dataset_kos(self):
        out = self.assert_ok("info", self.dataset("uci-bow-kos", "docword.kos.mtx.gz"))
        self.assertEqual(field(out, "rows"), "3430")
        self.assertEqual(field(out, "cols"), "6906")
        self.assertEqual(field(out, "nnz"), "353160")
        self.assertEqual(field(out, "row degree min / median / max"), "17 / 86 / 457")
        self.assertEqual(field(out, "empty rows"), "0")

    def test_shared_dataset_sec_edgar_has_empty_rows(self):
        out = self.assert_ok("info", self.dataset("sec-edgar-names", "char3gram_tfidf.mtx.gz"))
        self.assertEqual(field(out, "rows"), "8335")
        self.assertEqual(field(out, "row degree min / median / max"), "0 / 20 / 65")
        self.assertNotEqual(field(out, "empty rows"), "0")

    def test_bad_inputs_fail_with_one_clear_line(self):
        cases = {
            "banner.mtx": ("%%MatrixMaket matrix coordinate real general\n1 1 1\n1 1 1\n", ["banner.mtx:1:"]),
            "truncated.mtx": ("%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n2 2 2\n", ["truncated.mtx"]),
            "range.mtx": ("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", ["range.mtx:3:"]),
            "token.mtx": ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 abc\n", ["token.mtx:3:"]),
            "overflow.mtx": ("%%MatrixMarket matrix coordinate real general\n99999999999999999999 2 1\n1 1 1\n", ["overflow.mtx:2:"]),
            "huge.mtx": ("%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 2000000000000\n1 1 1\n", ["huge.mtx"]),
            "empty.mtx": ("", ["empty.mtx"]),
        }
        for name, (content, mentions) in cases.items():
            with self.subTest(name=name):
                self.assert_fails_clearly("info", self.path(name, content), mentions=mentions)
        self.assert_fails_clearly("info", self.tmp, mentions=[self.tmp])
        self.assert_fails_clearly("info", os.path.join(self.tmp, "missing.mtx"), mentions=["missing.mtx"])
        gz = self.path("cut.mtx.gz")
        with open(gz, "wb") as f:
            f.write(gzip.compress(b"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 2\n")[:30])
        self.assert_fails_clearly("info", gz, mentions=["cut.mtx.gz"])

    def test_usage_errors(self):
        self.assert_fails_clearly("info")
        self.assert_fails_clearly("info", "--bogus", "x.mtx", mentions=["--bogus"])
        code, _, err = run("frobnicate")
        self.assertEqual(code, 2)
        self.assertIn("frobnicate", err)


if __name__ == "__main__":
    unittest.main()
