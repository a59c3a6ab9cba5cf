"""The peer benchmark's parts that need no GPU (autotune_dispatch/peers.py):
reading a sweep config's shapes in its three forms, and the summary of a
CSV."""
import contextlib
import io
import os
import tempfile
import unittest

from autotune_dispatch import peers
from helpers import ROOT


def config(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    f.write(text)
    f.close()
    return f.name


class Shapes(unittest.TestCase):
    def test_the_seeds_benchmark(self):
        shapes = peers.shapes_of(os.path.join(ROOT, "configs", "seeds-benchmark.yaml"))
        self.assertEqual(len(shapes), 196)
        self.assertEqual(shapes[:2], [("f32", 4096, 256), ("f32", 4096, 384)])
        self.assertEqual(shapes[97:99], [("f32", 4096, 12672), ("bf16", 4096, 256)])

    def test_lists_over_several_lines_and_comments(self):
        path = config("warmup: 5\nsweeps:\n  - op: softmax   # a comment\n    dtypes: [f16]\n"
                      "    M: [1, 8]\n    N: [32,\n        64]\n  - op: softmax\n    dtypes: [bf16, f32]\n"
                      "    M: 2\n    N: {from: 10, to: 30, step: 10}\n")
        try:
            self.assertEqual(peers.shapes_of(path), [
                ("f16", 1, 32), ("f16", 1, 64), ("f16", 8, 32), ("f16", 8, 64),
                ("bf16", 2, 10), ("bf16", 2, 20), ("bf16", 2, 30),
                ("f32", 2, 10), ("f32", 2, 20), ("f32", 2, 30)])
        finally:
            os.unlink(path)

    def test_a_value_it_cannot_read_names_the_entry(self):
        path = config("sweeps:\n  - op: softmax\n    dtypes: [f32]\n    M: many\n    N: 4\n")
        try:
            with self.assertRaises(ValueError) as c:
                peers.shapes_of(path)
            self.assertIn(f"{path}: sweep entry 1: cannot read M ('many')", str(c.exception))
        finally:
            os.unlink(path)

    def test_the_default_grid(self):
        self.assertEqual(len(peers.shapes_of(os.path.join(ROOT, "configs", "softmax.yaml"))), 132)


class Summary(unittest.TestCase):
    def test_ratio_to_the_best_peer(self):
        rows = []
        for method, us in (("lib", 10.0), ("torch", 20.0), ("triton", 15.0), ("compile", 30.0)):
            rows.append({"dtype": "f32", "M": "4096", "N": "1024", "flush": "clean",
                         "method": method, "status": "ok", "us": str(us)})
        rows.append({"dtype": "f32", "M": "4096", "N": "2048", "flush": "clean", "method": "lib",
                     "status": "ok", "us": "10"})
        rows.append({"dtype": "f32", "M": "4096", "N": "2048", "flush": "clean", "method": "torch",
                     "status": "ok", "us": "8"})
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            peers.summarize(rows)
        # 15/10 and 8/10: geomean sqrt(1.2) = 1.095
        self.assertIn("library / best peer (clean, time ratio peer/lib): geomean 1.095 over 2 shapes, "
                      "ahead or level at 1", text.getvalue())


if __name__ == "__main__":
    unittest.main()
