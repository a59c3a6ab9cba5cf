"""tools/model_draw_folds.py: a draw's shapes that were re-swept later take
their results from the re-sweep alone, and a fold's databases split the
shapes between the fit and the test."""
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

from helpers import ROOT

sys.path.insert(0, os.path.join(ROOT, "tools"))
import model_draw_folds  # noqa: E402


def database(path, rows):
    """A database with winners and results at rows [(dtype, m, n), ...]."""
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE winners (dtype TEXT, m INTEGER, n INTEGER)")
        c.execute("CREATE TABLE results (dtype TEXT, m INTEGER, n INTEGER, time_us REAL)")
        c.executemany("INSERT INTO winners VALUES (?, ?, ?)", rows)
        c.executemany("INSERT INTO results VALUES (?, ?, ?, 1.0)", rows + rows)


def packed(path, rows):
    database(path, rows)
    subprocess.run(["xz", "-f", path], check=True)


def results_at(path):
    with sqlite3.connect(path) as c:
        return sorted(c.execute("SELECT dtype, m, n FROM results"))


class Draws(unittest.TestCase):
    def test_a_re_swept_shape_leaves_the_draw_but_stays_among_its_shapes(self):
        with tempfile.TemporaryDirectory() as d:
            res, work = os.path.join(d, "results"), os.path.join(d, "work")
            os.makedirs(res)
            os.makedirs(work)
            packed(os.path.join(res, "random-exact-17-h200.db"), [("f32", 5, 7), ("bf16", 9, 4096)])
            packed(os.path.join(res, "draws-short-rows-h200.db"), [("f32", 5, 7)])
            found, resweep = model_draw_folds.draws(work, res)
            self.assertEqual(sorted(found), ["17", "17+"])
            self.assertEqual(found["17+"], {("f32", 5, 7), ("bf16", 9, 4096)})
            self.assertEqual(results_at(found["17"]), [("bf16", 9, 4096)] * 2)
            self.assertEqual(results_at(resweep), [("f32", 5, 7)] * 2)

    def test_keep_and_drop_split_the_shapes(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "all.db")
            database(src, [("f32", 1, 2), ("f16", 3, 4), ("bf16", 5, 6)])
            test = model_draw_folds.keep_only(src, os.path.join(d, "test.db"), keep={("f16", 3, 4)})
            train = model_draw_folds.keep_only(src, os.path.join(d, "train.db"), drop={("f16", 3, 4)})
            self.assertEqual(results_at(test), [("f16", 3, 4)] * 2)
            self.assertEqual(results_at(train), [("bf16", 5, 6)] * 2 + [("f32", 1, 2)] * 2)
            self.assertEqual(model_draw_folds.shapes(train), {("f32", 1, 2), ("bf16", 5, 6)})


class Replace(unittest.TestCase):
    """--replace: a sweep of one template at some shapes takes the place of
    the grid's results of that template there, the others kept."""

    def test_the_sweeps_template_leaves_its_shapes_only(self):
        with tempfile.TemporaryDirectory() as d:
            grid, sweep = os.path.join(d, "grid.db"), os.path.join(d, "sweep.db")
            with sqlite3.connect(grid) as c:
                c.execute("CREATE TABLE results (id INTEGER, dtype TEXT, m INTEGER, n INTEGER, "
                          "template TEXT)")
                c.execute("CREATE TABLE winners (dtype TEXT, m INTEGER, n INTEGER, result_id INTEGER)")
                c.execute("CREATE TABLE kernels (result_id INTEGER)")
                c.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?)",
                              [(1, "f32", 8, 16384, "regs"), (2, "f32", 8, 16384, "split"),
                               (3, "f32", 1, 100, "regs")])
                c.executemany("INSERT INTO winners VALUES (?, ?, ?, ?)",
                              [("f32", 8, 16384, 1), ("f32", 1, 100, 3)])
                c.executemany("INSERT INTO kernels VALUES (?)", [(1,), (3,)])
            with sqlite3.connect(sweep) as c:
                c.execute("CREATE TABLE results (dtype TEXT, m INTEGER, n INTEGER, template TEXT)")
                c.execute("INSERT INTO results VALUES ('f32', 8, 16384, 'regs')")
            out = model_draw_folds.replace_in(grid, sweep, os.path.join(d, "replaced.db"))
            with sqlite3.connect(out) as c:
                self.assertEqual(sorted(r[0] for r in c.execute("SELECT id FROM results")), [2, 3])
                self.assertEqual(c.execute("SELECT dtype, m, n FROM winners").fetchall(),
                                 [("f32", 1, 100)])
                self.assertEqual(c.execute("SELECT result_id FROM kernels").fetchall(), [(3,)])
            with sqlite3.connect(grid) as c:  # the grid itself untouched
                self.assertEqual(c.execute("SELECT COUNT(*) FROM results").fetchone()[0], 3)


if __name__ == "__main__":
    unittest.main()
