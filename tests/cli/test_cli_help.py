"""spira --help and spira COMMAND --help: exit 0, the options and defaults, and docs/cli.md quoting
each text verbatim (the help table in src/cli/help.cpp is the one source of both)."""
import os
import re
import unittest

from clitest import CliTestCase, run

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "cli.md")
COMMANDS = ["info", "distance", "topk", "knn"]
COMPUTING = ["distance", "topk", "knn"]


def doc_blocks():
    """{"distance": text, ...} from the "### `spira CMD --help`" sections of docs/cli.md."""
    with open(DOC, encoding="utf-8") as f:
        doc = f.read()
    found = re.findall(r"### `spira (?:(\w+) )?--help`\n\n```text\n(.*?)```", doc, re.DOTALL)
    return {cmd: text for cmd, text in found}


class HelpTest(CliTestCase):
    def test_every_command_prints_its_help_and_exits_0(self):
        for cmd in COMMANDS:
            for flag in ("--help", "-h"):
                with self.subTest(cmd=cmd, flag=flag):
                    code, out, err = run(cmd, flag)
                    self.assertEqual(code, 0, err)
                    self.assertEqual(err, "")
                    self.assertTrue(out.startswith(f"usage: spira {cmd} "), out)
                    self.assertIn("-h, --help", out)

    def test_help_wins_over_other_arguments(self):
        code, out, _ = run("knn", "missing.mtx", "-k", "0", "--help")
        self.assertEqual(code, 0)
        self.assertTrue(out.startswith("usage: spira knn "))

    def test_computing_commands_list_threads_and_output(self):
        for cmd in COMPUTING:
            with self.subTest(cmd=cmd):
                out = self.assert_ok(cmd, "--help")
                self.assertIn("--threads N", out)
                self.assertIn("default 0", out)
                self.assertIn("output: OUT.np", out)
                self.assertIn("--backend B", out)

    def test_metric_commands_list_every_metric_and_alias(self):
        names = ["cosine", "euclidean", "sqeuclidean", "manhattan", "chebyshev", "minkowski",
                 "canberra", "braycurtis", "hamming", "jaccard", "dice", "russellrao",
                 "correlation", "jensenshannon", "hellinger", "kl_divergence", "inner_product",
                 "cityblock (manhattan)", "l1 (manhattan)", "l2 (euclidean)"]
        for cmd in ("distance", "knn"):
            out = self.assert_ok(cmd, "--help")
            for n in names:
                self.assertIn(n, out, f"{cmd} --help does not list {n}")
            self.assertIn("(default 2; minkowski only)", out)

    def test_tool_help_lists_the_commands(self):
        for flag in ("--help", "-h"):
            code, out, _ = run(flag)
            self.assertEqual(code, 0)
            for cmd in COMMANDS:
                self.assertRegex(out, rf"\n  {cmd} ")
            self.assertIn("spira <command> --help", out)
        code, _, err = run()
        self.assertEqual(code, 2)
        self.assertIn("usage: spira", err)

    def test_docs_quote_every_help_text_verbatim(self):
        blocks = doc_blocks()
        self.assertEqual(sorted(blocks), sorted(["", *COMMANDS]), "docs/cli.md sections")
        for cmd in ["", *COMMANDS]:
            with self.subTest(cmd=cmd or "spira"):
                out = self.assert_ok(*([cmd] if cmd else []), "--help")
                self.assertEqual(blocks[cmd], out,
                                 f"docs/cli.md differs from `spira {cmd} --help`: copy the output")

    def test_unknown_command_with_help_is_a_usage_error(self):
        code, _, err = run("bogus", "--help")
        self.assertEqual(code, 2)
        self.assertIn("unknown command 'bogus'", err)


if __name__ == "__main__":
    unittest.main()
