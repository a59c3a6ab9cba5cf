#!/usr/bin/env python3
"""The library database with one op's results at a sweep's shapes replaced
by that sweep's: LIB's results, winners and stored kernels of OP at the
shapes SRC tuned are dropped, SRC is merged in (`autotune db merge`, which
chooses those shapes' winners again among SRC's own), and LIB's models of
OP are put back (the merge refits them on what it merged; a sweep of a few
shapes, or of one template, would change what the model serves elsewhere).

For a template's code change re-swept at some shapes: the merge alone keeps
the old sweep's winner where its time was lower, and with it the old code.

  python3 tools/lib_replace.py LIB SRC OP [--autotune build/autotune]
"""
import argparse
import sqlite3
import subprocess


def drop_shapes(lib, op, shapes):
    """LIB's results, winners and stored kernels of op at shapes [(dtype, m,
    n), ...] deleted, and the sweeps left without results: the winners
    dropped, and the op's models (rows of the models table) as they were."""
    c = sqlite3.connect(lib)
    models = c.execute("SELECT * FROM models WHERE op = ?", (op,)).fetchall()
    c.execute("CREATE TEMP TABLE picked (dtype TEXT, m INTEGER, n INTEGER)")
    c.executemany("INSERT INTO picked VALUES (?, ?, ?)", shapes)
    at_shapes = "op = ? AND (dtype, m, n) IN (SELECT dtype, m, n FROM picked)"
    c.execute(f"DELETE FROM kernels WHERE result_id IN (SELECT id FROM results WHERE {at_shapes})",
              (op,))
    dropped = c.execute(f"DELETE FROM winners WHERE {at_shapes}", (op,)).rowcount
    c.execute(f"DELETE FROM results WHERE {at_shapes}", (op,))
    # a sweep left without results goes too (merge skips a sweep it has)
    c.execute("DELETE FROM sweeps WHERE id NOT IN (SELECT DISTINCT sweep_id FROM results)")
    c.commit()
    c.close()
    return dropped, models


def put_models(lib, op, models):
    """op's models in LIB replaced by models (drop_shapes' rows)."""
    c = sqlite3.connect(lib)
    c.execute("DELETE FROM models WHERE op = ?", (op,))
    if models:
        marks = ",".join("?" * len(models[0]))
        c.executemany(f"INSERT INTO models VALUES ({marks})", models)
    c.commit()
    got = c.execute("SELECT COUNT(*) FROM winners WHERE op = ?", (op,)).fetchone()[0]
    c.close()
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lib", help="the library database, changed in place")
    ap.add_argument("src", help="a sweep's database of OP (its models are not merged)")
    ap.add_argument("op")
    ap.add_argument("--autotune", default="build/autotune")
    args = ap.parse_args()

    with sqlite3.connect(args.src) as src:
        shapes = src.execute("SELECT DISTINCT dtype, m, n FROM winners WHERE op = ?",
                             (args.op,)).fetchall()
    if not shapes:
        raise SystemExit(f"lib_replace: {args.src} has no winner of {args.op}")
    dropped, models = drop_shapes(args.lib, args.op, shapes)
    subprocess.run([args.autotune, "db", "merge", args.lib, args.src], check=True,
                   stdout=subprocess.DEVNULL)
    got = put_models(args.lib, args.op, models)
    print(f"lib_replace: {args.op}: {dropped} winners replaced by {len(shapes)} of {args.src}; "
          f"{got} winners; {len(models)} models kept")


if __name__ == "__main__":
    main()
