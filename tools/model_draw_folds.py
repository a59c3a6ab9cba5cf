"""The softmax model judged by leave-one-draw-out, and fitted on all the
measurements: the grid's sweep plus every drawn set's exhaustive sweep.

Each drawn set (results/h200/random-exact-SEED-h200.db.xz) was swept with
every variant at 25-40 shapes drawn at random; a re-sweep of some of their
shapes with later templates (results/h200/draws-short-rows-h200.db.xz, the
rows of N <= 64 after softmax_tiny changed) replaces that shape's older
results. Fold SEED fits on the grid and the other draws, and chooses at
SEED's shapes: a measurement on shapes the fit never saw, over every
draw's shapes in turn. Each fold is scored like tools/model_heldout.py
(each choice's time looked up in that shape's exhaustive results) and set
against the BASELINE models (e.g. the shipped seed, fitted on the grid
alone; a path with %d takes the fold's seed).

Usage: python3 tools/model_draw_folds.py WORKDIR [--fit-args "--fits 3"]
           [--baseline MODEL ...] [--all OUT.txt] [--autotune build/autotune]
           [--results DIR] [--replace SWEEP.db.xz ...]

--all fits one more model on the grid and every draw (what the library
ships) into OUT.txt. WORKDIR keeps the databases and the fold models.
--replace: a sweep of some templates at some of the grid's shapes (a
template's space grown: results/h200/cluster-regs-long-rows-h200.db.xz)
whose results replace the grid's of those templates at those shapes.
--results: where the databases are (default results/h200).
"""
import argparse
import glob
import hashlib
import os
import re
import shlex
import sqlite3
import subprocess

import model_heldout

RESULTS = "results/h200"
GRID = f"{RESULTS}/default-h200.db.xz"
RESWEEP = f"{RESULTS}/draws-short-rows-h200.db.xz"
GPU = "NVIDIA H200"


def unpack(xz, out):
    if not os.path.exists(out):
        with open(out, "wb") as f:
            subprocess.run(["xz", "-dc", xz], stdout=f, check=True)
    return out


def shapes(db):
    with sqlite3.connect(db) as c:
        return {tuple(r) for r in c.execute("SELECT dtype, m, n FROM winners")}


def keep_only(src, dst, keep=None, drop=None):
    """A copy of src with only the shapes of keep, or without those of drop."""
    if os.path.exists(dst):
        os.remove(dst)
    with sqlite3.connect(src) as c, sqlite3.connect(dst) as out:
        c.backup(out)
    with sqlite3.connect(dst) as c:
        c.execute("CREATE TEMP TABLE picked (dtype TEXT, m INTEGER, n INTEGER)")
        c.executemany("INSERT INTO picked VALUES (?, ?, ?)", keep if keep is not None else drop)
        where = "NOT IN" if keep is not None else "IN"
        for table in ("winners", "results"):
            c.execute(f"DELETE FROM {table} WHERE (dtype, m, n) {where} "
                      "(SELECT dtype, m, n FROM picked)")
    return dst


def merge(autotune, out, inputs):
    if os.path.exists(out):
        os.remove(out)
    subprocess.run([autotune, "db", "merge", out, *inputs], check=True, capture_output=True)
    return out


def fit(autotune, db, out, fit_args):
    if not os.path.exists(out):
        subprocess.run([autotune, "model", "fit", "--db", db, "--gpu", GPU, "-o", out,
                        *shlex.split(fit_args)], check=True, capture_output=True)
    return out


def replace_in(grid, sweep, dst):
    """A copy of grid whose results of sweep's templates at sweep's shapes
    are dropped (and the winners they were), for sweep's to take their place."""
    with sqlite3.connect(sweep) as c:
        cut = c.execute("SELECT DISTINCT dtype, m, n, template FROM results").fetchall()
    keep_only(grid, dst, drop=[])
    with sqlite3.connect(dst) as c:
        c.execute("CREATE TEMP TABLE cut (dtype TEXT, m INTEGER, n INTEGER, template TEXT)")
        c.executemany("INSERT INTO cut VALUES (?, ?, ?, ?)", cut)
        c.execute("DELETE FROM results WHERE (dtype, m, n, template) IN (SELECT * FROM cut)")
        c.execute("DELETE FROM winners WHERE result_id NOT IN (SELECT id FROM results)")
        c.execute("DELETE FROM kernels WHERE result_id NOT IN (SELECT id FROM results)")
    return dst


def draws(work, results=RESULTS):
    """{seed: its database with the shapes re-swept since taken out, seed +
    "+": every shape it drew}, and the re-sweep's database."""
    resweep = unpack(f"{results}/{os.path.basename(RESWEEP)}", f"{work}/resweep.db")
    again = shapes(resweep)
    out = {}
    for xz in sorted(glob.glob(f"{results}/random-exact-*-h200.db.xz")):
        seed = re.search(r"random-exact-(\d+)-h200", xz)[1]
        raw = unpack(xz, f"{work}/raw-{seed}.db")
        out[seed] = keep_only(raw, f"{work}/draw-{seed}.db", drop=shapes(raw) & again)
        out[seed + "+"] = shapes(raw)
    return out, resweep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work")
    ap.add_argument("--fit-args", default="")
    ap.add_argument("--baseline", nargs="*", default=[])
    ap.add_argument("--all")
    ap.add_argument("--autotune", default="build/autotune")
    ap.add_argument("--results", default=RESULTS)
    ap.add_argument("--replace", nargs="*", default=[])
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    tag = re.sub(r"[^A-Za-z0-9]+", "_", args.fit_args).strip("_") or "defaults"
    grid = unpack(f"{args.results}/{os.path.basename(GRID)}", f"{args.work}/grid.db")
    sweeps = []
    for i, xz in enumerate(args.replace):
        sweep = unpack(xz, f"{args.work}/replace-{i}.db")
        grid = replace_in(grid, sweep, f"{args.work}/grid-replaced-{i}.db")
        sweeps.append(sweep)
    if args.replace:
        tag += "-" + hashlib.sha256(" ".join(args.replace).encode()).hexdigest()[:8]
    found, resweep = draws(args.work, args.results)
    seeds = [s for s in found if not s.endswith("+")]
    # a fold's model is kept in WORKDIR by its fit and the draws it knew of
    tag += "-" + hashlib.sha256(" ".join(seeds).encode()).hexdigest()[:8]
    everything = merge(args.autotune, f"{args.work}/all.db",
                       [grid, resweep] + sweeps + [found[s] for s in seeds])
    names = args.baseline + [f"fold fit ({args.fit_args or 'defaults'})"]
    scores = [[] for _ in names]
    for seed in seeds:
        own = found[seed + "+"]
        test = keep_only(everything, f"{args.work}/test-{seed}.db", keep=own)
        train = keep_only(everything, f"{args.work}/train-{seed}.db", drop=own)
        model = fit(args.autotune, train, f"{args.work}/model-{tag}-{seed}.txt", args.fit_args)
        models = [b.replace("%d", seed) if "%d" in b else b for b in args.baseline] + [model]
        runs = [model_heldout.choices(args.autotune, GPU, m, test) for m in models]
        keys = [k for k in runs[0] if all(k in r for r in runs)]
        cells = []
        for i, r in enumerate(runs):
            ratios = [r[k][1] for k in keys]
            scores[i] += ratios
            cells.append(f"{model_heldout.geomean(ratios):.3f} ({sum(x >= 0.9 for x in ratios)})")
        print(f"draw {seed}, {len(keys)} shapes: " + " | ".join(cells), flush=True)
    for name, ratios in zip(names, scores):
        print(f"{name}: {len(ratios)} shapes, {model_heldout.geomean(ratios):.3f} of the exact "
              f"winner, {sum(x >= 0.9 for x in ratios)} within 10%")
    if args.all:
        os.makedirs(os.path.dirname(os.path.abspath(args.all)), exist_ok=True)
        if os.path.exists(args.all):
            os.remove(args.all)
        fit(args.autotune, everything, args.all, args.fit_args)
        print(f"fitted on the grid and every draw: {args.all}")


if __name__ == "__main__":
    main()
