#!/usr/bin/env python3
"""What the library serves over a grid of shapes, asked of `autotune show`
(the library's own decision, for a described GPU): one line a shape,
"DTYPE M N TEMPLATE PARAMS". Run it with two builds (or two databases) and
--pairs lists the shapes whose choice changed as a spec for
tools/variant_bench.py: the choice before, then after, so that the change
is timed where it changes anything (sessions 51 and 52: a manifest change
moved 31 and 33 choices of 441 and 660).

  python3 tools/show_survey.py --autotune OLD/build/autotune --db lib.db > before.txt
  python3 tools/show_survey.py --db lib.db > after.txt
  python3 tools/show_survey.py --pairs before.txt after.txt [--before-templates DIR] > changed.spec

--no-db asks what a process without a database gets (the seed models).
--before-templates DIR marks the choices before as TEMPLATE@DIR, for a
variant that the manifests of DIR still hold valid (variant_bench.py).
"""
import argparse
import subprocess
import sys

DEFAULT_ROWS = "1,4,16,64,256,1024,4096,16384,65536,262144,1000000"
DEFAULT_COLS = "5,13,26,37,50,77,100,126,150,200,255,300,500,777,1001,1500,3001,5000,12001,50001"


def survey(args):
    for d in args.dtypes.split(","):
        for M in args.rows.split(","):
            for N in args.cols.split(","):
                cmd = [args.autotune, "show", "--op", args.op, "--dtype", d, "-M", M, "-N", N,
                       "--gpu", args.gpu, "--cc", args.cc]
                cmd += ["--no-db", "--sm-count", str(args.sm_count)] if args.no_db else ["--db", args.db]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                got = dict(line.split(None, 1) for line in out.splitlines() if " " in line.strip())
                print(d, M, N, got["template"].strip(), got["params"].strip())


def pairs(args):
    def load(path):
        with open(path) as f:
            return {tuple(line.split()[:3]): line.split(None, 3)[3].strip()
                    for line in f if line.strip() and not line.startswith("#")}
    before, after = load(args.pairs[0]), load(args.pairs[1])
    for shape in before:
        if shape in after and before[shape] != after[shape]:
            template, params = before[shape].split(None, 1)
            if args.before_templates:
                template += "@" + args.before_templates
            print(*shape, template, params)
            print(*shape, after[shape])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--autotune", default="build/autotune")
    ap.add_argument("--db", help="the database the library opens")
    ap.add_argument("--no-db", action="store_true", help="no database: the seeds")
    ap.add_argument("--op", default="softmax")
    ap.add_argument("--gpu", default="NVIDIA H200")
    ap.add_argument("--cc", default="9.0")
    ap.add_argument("--sm-count", type=int, default=132, help="with --no-db")
    ap.add_argument("--dtypes", default="f32,f16,bf16")
    ap.add_argument("--rows", default=DEFAULT_ROWS)
    ap.add_argument("--cols", default=DEFAULT_COLS)
    ap.add_argument("--pairs", nargs=2, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--before-templates", metavar="DIR")
    args = ap.parse_args()
    if args.pairs:
        pairs(args)
    elif args.no_db == bool(args.db):
        sys.exit("show_survey: give --db DB or --no-db (or --pairs BEFORE AFTER)")
    else:
        survey(args)


if __name__ == "__main__":
    main()
