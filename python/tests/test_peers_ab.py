"""tools/peers_ab.py: two libraries' peer CSVs side by side, one round or
several a side (the geometric mean over the rounds, and A's rounds against
each other)."""
import csv
import os
import tempfile
import unittest

from helpers import run_tool

FIELDS = ["dtype", "M", "N", "flush", "method", "status", "us"]


def write(path, rows):
    """rows: (M, flush, method, us) of bf16 x 1000, status ok."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for M, flush, method, us in rows:
            w.writerow(dict(dtype="bf16", M=M, N=1000, flush=flush, method=method, status="ok", us=us))


def run(*argv):
    return run_tool("peers_ab.py", *argv)


class Rounds(unittest.TestCase):
    def test_one_round_a_side_gives_the_ratio_of_the_times(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a.csv"), os.path.join(d, "b.csv")
            write(a, [(1, "clean", "lib", 20.0), (2, "clean", "lib", 10.0)])
            write(b, [(1, "clean", "lib", 10.0), (2, "clean", "lib", 10.0)])
            r = run(a, b)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "clean: 2 shapes; A/B 1.414\n")  # sqrt(2 x 1)

    def test_rounds_average_geometrically_and_say_their_own_spread(self):
        with tempfile.TemporaryDirectory() as d:
            paths = [os.path.join(d, f"{n}.csv") for n in ("a1", "a2", "b1", "b2")]
            write(paths[0], [(1, "dirty", "lib", 8.0), (1, "dirty", "torch", 16.0)])
            write(paths[1], [(1, "dirty", "lib", 2.0)])
            write(paths[2], [(1, "dirty", "lib", 4.0)])
            write(paths[3], [(1, "dirty", "lib", 1.0)])
            r = run(",".join(paths[:2]), ",".join(paths[2:]))
        self.assertEqual(r.returncode, 0, r.stderr)
        # A 4 us (8 and 2), B 2 us (4 and 1); torch 16 from A's first round
        self.assertEqual(r.stdout, "dirty: 1 shapes; A/B 2.000; best peer / A 4.000 (level or ahead 1),"
                                   " best peer / B 8.000 (1); A/A (A's first round over its last) 4.000\n")


if __name__ == "__main__":
    unittest.main()
