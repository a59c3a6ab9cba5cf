#!/usr/bin/env python3
"""Leave-one-out check of the dispatch library's choice for untuned shapes.

For each tuned shape of a sweep database, hides that shape's winner, asks
`autotune show` what the library would then serve (derived from the other
winners, as for a shape nobody tuned), and looks the served variant up
among the results the sweep stored for that shape: its time against the
winner's says how good the derivation rules are, with no GPU. A served
variant the sweep never timed at that shape is counted apart.

    tools/derive_loo.py DB [--autotune build/autotune] [--gpu NAME --cc X.Y]
                           [--worst K] [--csv FILE]

Times of variants the sweep screened out or timed only in its first round
are less precise than the winner's (a few %). tests/test_derive_loo.c makes
the same check on results/example's database, with floors, in `make test`.
"""
import argparse
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile


def show(autotune, db, gpu, cc, dtype, m, n):
    out = subprocess.run([autotune, "show", "--db", db, "--gpu", gpu, "--cc", cc,
                          "--dtype", dtype, "-M", str(m), "-N", str(n)],
                         capture_output=True, text=True, check=True).stdout
    fields = {}
    for line in out.splitlines():
        key, _, value = line.partition(" ")
        fields[key] = value.strip()
    return fields.get("level", "?"), fields.get("template", ""), fields.get("params", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db")
    ap.add_argument("--autotune", default="build/autotune")
    ap.add_argument("--gpu", default="NVIDIA H100 80GB HBM3")
    ap.add_argument("--cc", default="9.0")
    ap.add_argument("--worst", type=int, default=15, help="list the K worst shapes")
    ap.add_argument("--csv", help="write every shape's outcome here")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="derive-loo-")
    work = os.path.join(tmp, "loo.db")
    shutil.copy(args.db, work)
    con = sqlite3.connect(work)
    winners = con.execute(
        "SELECT w.rowid, w.dtype, w.m, w.n, r.time_us, r.template, r.params FROM winners w "
        "JOIN results r ON r.id = w.result_id JOIN gpus g ON g.id = w.gpu_id "
        "WHERE g.name = ? AND w.op = 'softmax' ORDER BY w.dtype, w.m, w.n",
        (args.gpu,)).fetchall()
    rows = []
    for rowid, dtype, m, n, best_us, wt, wp in winners:
        saved = con.execute("SELECT * FROM winners WHERE rowid = ?", (rowid,)).fetchone()
        con.execute("DELETE FROM winners WHERE rowid = ?", (rowid,))
        con.commit()
        level, template, params = show(args.autotune, work, args.gpu, args.cc, dtype, m, n)
        con.execute("INSERT INTO winners VALUES (%s)" % ",".join("?" * len(saved)), saved)
        con.commit()
        hit = con.execute(
            "SELECT MIN(time_us) FROM results WHERE dtype = ? AND m = ? AND n = ? AND "
            "template = ? AND params = ? AND status = 'ok' AND kind = 'variant'",
            (dtype, m, n, template, params)).fetchone()[0]
        ratio = best_us / hit if hit else None
        rows.append((dtype, m, n, level, template, params, best_us, hit, ratio, wt, wp))
    con.close()
    shutil.rmtree(tmp)

    timed = [r for r in rows if r[8]]
    if timed:
        geo = math.exp(sum(math.log(r[8]) for r in timed) / len(timed))
        print("shapes %d, served variant timed at %d: geomean winner/served %.3f, "
              "within 5%% %d, within 10%% %d" % (
                  len(rows), len(timed), geo, sum(r[8] >= 1 / 1.05 for r in timed),
                  sum(r[8] >= 1 / 1.1 for r in timed)))
    print("not timed at the shape: %d" % (len(rows) - len(timed)))
    for r in sorted(timed, key=lambda r: r[8])[:args.worst]:
        print("%-4s %6d x %-7d %.3f  %-8s %s %s\n%33s winner %s %s (%.2f us)" % (
            r[0], r[1], r[2], r[8], r[3], r[4], r[5], "", r[9], r[10], r[6]))
    if args.csv:
        import csv
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["dtype", "M", "N", "level", "template", "params", "winner_us",
                        "served_us", "winner_over_served"])
            for r in rows:
                w.writerow(r[:8] + (("%.4f" % r[8]) if r[8] else "",))
    return 0


if __name__ == "__main__":
    sys.exit(main())
