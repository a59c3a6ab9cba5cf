#!/usr/bin/env python3
"""Shapes nobody tuned, drawn at measurement time: a sweep config of COUNT
shapes, M log-uniform in [1, 10^6], N log-uniform in [1, 4 x 10^6], the
dtype uniform over f32, f16 and bf16, from SEED (same seed, same shapes);
--min-n N0 draws N log-uniform in [N0, 4 x 10^6] instead (a regime's
draw: the long rows a template change touches).
A draw whose tensor would exceed --max-bytes is drawn again (the H200's
memory bounds M x N; the exhaustive sweep of a measurement's own shapes
bounds the time). Never fit or tune a rule on these shapes: draw a new
seed for every report, and say it.

    tools/random_shapes.py --seed 20261126 --count 40 > random.yaml
"""
import argparse
import math
import random
import sys


def draw(rng, count, max_bytes, min_n=1):
    sizes = {"f32": 4, "f16": 2, "bf16": 2}
    shapes = []
    while len(shapes) < count:
        M = int(round(math.exp(rng.uniform(0, math.log(1e6)))))
        N = int(round(math.exp(rng.uniform(math.log(min_n), math.log(4e6)))))
        dt = rng.choice(sorted(sizes))
        if M * N * sizes[dt] <= max_bytes and (dt, M, N) not in shapes:
            shapes.append((dt, M, N))
    return shapes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--max-bytes", type=float, default=2 ** 30)
    ap.add_argument("--min-n", type=int, default=1, help="the shortest row drawn (default 1)")
    ap.add_argument("--op", default="softmax", help="the op the config sweeps (default softmax)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    out = sys.stdout
    out.write(f"# {args.count} shapes drawn by tools/random_shapes.py --seed {args.seed} "
              f"--count {args.count} --max-bytes {int(args.max_bytes)} --min-n {args.min_n}\n")
    out.write("warmup: 5\nrepetitions: 25\nsweeps:\n")
    for dt, M, N in draw(rng, args.count, args.max_bytes, args.min_n):
        out.write(f"  - op: {args.op}\n    dtypes: [{dt}]\n    M: [{M}]\n    N: [{N}]\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
