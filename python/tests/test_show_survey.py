"""tools/show_survey.py: the changed choices of two surveys as a
variant_bench spec, and a survey of the no-database library through the
built command line (skipped when build/autotune is not built)."""
import os
import tempfile
import unittest

from helpers import ROOT, run_tool

AUTOTUNE = os.path.join(ROOT, "build", "autotune")


def run(*argv):
    return run_tool("show_survey.py", *argv)


class Pairs(unittest.TestCase):
    def test_only_changed_shapes_the_choice_before_first_marked_with_its_folder(self):
        with tempfile.TemporaryDirectory() as d:
            before, after = os.path.join(d, "b.txt"), os.path.join(d, "a.txt")
            with open(before, "w") as f:
                f.write("bf16 4096 126 softmax_warp lanes=8 peel=1\nf32 1 5 softmax_tiny lanes=8\n"
                        "f16 9 9 softmax_tiny lanes=4\n")
            with open(after, "w") as f:
                f.write("# a comment\nbf16 4096 126 softmax_tile lanes=16\nf32 1 5 softmax_tiny lanes=8\n")
            r = run("--pairs", before, after, "--before-templates", "old")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "bf16 4096 126 softmax_warp@old lanes=8 peel=1\n"
                                   "bf16 4096 126 softmax_tile lanes=16\n")

    def test_a_survey_needs_a_database_or_no_db(self):
        r = run("--rows", "1", "--cols", "5")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("give --db DB or --no-db", r.stderr)


@unittest.skipUnless(os.access(AUTOTUNE, os.X_OK), "build/autotune is not built")
class Survey(unittest.TestCase):
    def test_no_db_on_an_sm_90_gpu_is_the_seed_models_choice(self):
        r = run("--autotune", AUTOTUNE, "--no-db", "--dtypes", "f32", "--rows", "1000000", "--cols", "7")
        self.assertEqual(r.returncode, 0, r.stderr)
        words = r.stdout.split()
        self.assertEqual(words[:4], ["f32", "1000000", "7", "softmax_tile"])
        self.assertIn("lanes=1", words)


if __name__ == "__main__":
    unittest.main()
