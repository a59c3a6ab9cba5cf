"""tools/lib_replace.py: an op's results at a sweep's shapes leave the
library database with their winners and kernels (the other ops' and shapes'
stay), and the op's models go back as they were after the merge."""
import os
import sqlite3
import sys
import tempfile
import unittest

from helpers import ROOT

sys.path.insert(0, os.path.join(ROOT, "tools"))
import lib_replace  # noqa: E402


def library(path):
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE sweeps (id INTEGER)")
        c.execute("CREATE TABLE results (id INTEGER, sweep_id INTEGER, op TEXT, dtype TEXT, "
                  "m INTEGER, n INTEGER)")
        c.execute("CREATE TABLE winners (op TEXT, dtype TEXT, m INTEGER, n INTEGER, result_id INTEGER)")
        c.execute("CREATE TABLE kernels (result_id INTEGER)")
        c.execute("CREATE TABLE models (gpu_id INTEGER, op TEXT, text TEXT)")
        c.executemany("INSERT INTO sweeps VALUES (?)", [(1,), (2,)])
        rows = [(1, 1, "cross_entropy", "bf16", 1024, 32000), (2, 2, "cross_entropy", "bf16", 64, 8192),
                (3, 1, "softmax", "bf16", 1024, 32000)]
        c.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?)", rows)
        c.executemany("INSERT INTO winners VALUES (?, ?, ?, ?, ?)", [r[2:] + (r[0],) for r in rows])
        c.executemany("INSERT INTO kernels VALUES (?)", [(1,), (2,), (3,)])
        c.executemany("INSERT INTO models VALUES (?, ?, ?)",
                      [(1, "cross_entropy", "old ce"), (1, "softmax", "old softmax")])


class Replace(unittest.TestCase):
    def test_the_ops_results_at_the_shapes_leave_and_its_models_come_back(self):
        with tempfile.TemporaryDirectory() as d:
            lib = os.path.join(d, "lib.db")
            library(lib)
            dropped, models = lib_replace.drop_shapes(lib, "cross_entropy", [("bf16", 1024, 32000)])
            self.assertEqual(dropped, 1)
            self.assertEqual(models, [(1, "cross_entropy", "old ce")])
            with sqlite3.connect(lib) as c:
                self.assertEqual(sorted(r[0] for r in c.execute("SELECT id FROM results")), [2, 3])
                self.assertEqual(sorted(r[0] for r in c.execute("SELECT result_id FROM kernels")),
                                 [2, 3])
                self.assertEqual(sorted(c.execute("SELECT op, m FROM winners")),
                                 [("cross_entropy", 64), ("softmax", 1024)])
                self.assertEqual(sorted(r[0] for r in c.execute("SELECT id FROM sweeps")), [1, 2])
                # what a merge does to the models: refits them
                c.execute("UPDATE models SET text = 'refit'")
            self.assertEqual(lib_replace.put_models(lib, "cross_entropy", models), 1)
            with sqlite3.connect(lib) as c:
                self.assertEqual(sorted(c.execute("SELECT op, text FROM models")),
                                 [("cross_entropy", "old ce"), ("softmax", "refit")])

    def test_a_sweep_left_without_results_goes(self):
        with tempfile.TemporaryDirectory() as d:
            lib = os.path.join(d, "lib.db")
            library(lib)
            lib_replace.drop_shapes(lib, "cross_entropy", [("bf16", 64, 8192)])
            with sqlite3.connect(lib) as c:
                self.assertEqual([r[0] for r in c.execute("SELECT id FROM sweeps")], [1])


if __name__ == "__main__":
    unittest.main()
