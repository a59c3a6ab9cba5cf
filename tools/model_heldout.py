"""Performance models side by side on shapes none of them was fitted on:
each model's choice at each shape of a held-out database (the draws'
exhaustive sweeps), looked up in that shape's times by `autotune model eval
--model FILE --db DB`, summed up as the geometric mean of winner / chosen
time and the shapes within 10%, over all shapes and over the slower ones
(where the winner is not the least of hundreds of noisy 4 us times).

Usage: python3 tools/model_heldout.py HELDOUT.db MODEL.txt [MODEL.txt ...]
           [--autotune build/autotune] [--gpu "NVIDIA H200"] [--diff]

A model text comes from `autotune model fit --db DB -o FILE`, or from a
database's models table (sqlite3 DB "SELECT text FROM models WHERE op =
'softmax'"). --diff lists the shapes where the first two models' ratios
differ by more than 0.05. The held-out set of session 51 (142 shapes): the
four H200 draws' results/h200/random-exact-*-h200.db.xz with their shapes
of N <= 64 deleted, merged (`autotune db merge`) with
results/h200/draws-short-rows-h200.db.xz (those shapes re-swept with the
templates of that session). Since session 53 the shipped softmax model is
fitted on those draws too: judge a fit by tools/model_draw_folds.py
(leave-one-draw-out) and on a draw taken after it.
"""
import argparse
import math
import re
import subprocess

SHAPE_LINE = re.compile(r"^(\S+)\s+(\d+)\s+(\d+)\s+winner\s+([0-9.]+) us\s+rules (\S+)\s+(.*?)\s+"
                        r"([0-9.]+) us ([0-9.]+)")


def choices(autotune, gpu, model, db):
    """{(dtype, M, N): (winner us, winner / chosen, template and params)}"""
    out = subprocess.run([autotune, "model", "eval", "--model", model, "--db", db, "--gpu", gpu,
                          "--templates", "templates"], capture_output=True, text=True, check=True)
    got = {}
    for line in out.stdout.splitlines():
        m = SHAPE_LINE.match(line)
        if m:
            got[(m[1], int(m[2]), int(m[3]))] = (float(m[4]), float(m[8]), f"{m[5]} {m[6]}")
    return got


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--autotune", default="build/autotune")
    ap.add_argument("--gpu", default="NVIDIA H200")
    ap.add_argument("--diff", action="store_true")
    args = ap.parse_args()
    runs = [choices(args.autotune, args.gpu, m, args.db) for m in args.models]
    shared = [k for k in runs[0] if all(k in r for r in runs)]
    print("models:", " | ".join(args.models))
    for floor in (0, 8, 20):
        keys = [k for k in shared if runs[0][k][0] >= floor]
        cells = [f"{geomean([r[k][1] for k in keys]):.3f} ({sum(r[k][1] >= 0.9 for k in keys)} within 10%)"
                 for r in runs]
        print(f"winner >= {floor:2d} us, {len(keys)} shapes: " + " | ".join(cells))
    if args.diff and len(runs) > 1:
        for k in sorted(shared):
            a, b = runs[0][k], runs[1][k]
            if abs(a[1] - b[1]) > 0.05:
                print(f"  {k[0]} {k[1]} x {k[2]}: winner {a[0]:.1f} us, {a[1]:.3f} -> {b[1]:.3f} ({b[2][:70]})")


if __name__ == "__main__":
    main()
