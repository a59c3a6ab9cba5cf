#!/usr/bin/env python3
"""Per shape of a sweep database: the best %copy of one template against
the best of the op's other templates, and the winner (same run, so the
ratio is fair). Usage: tools/ce_template_best.py DB TEMPLATE [OP]"""
import sqlite3
import sys

db, tmpl = sys.argv[1], sys.argv[2]
op = sys.argv[3] if len(sys.argv) > 3 else "cross_entropy"
c = sqlite3.connect(db)
rows = c.execute(
    "SELECT dtype, m, n, template = ? AS mine, MAX(pct_copy) FROM results WHERE op = ? AND "
    "status = 'ok' AND kind = 'variant' GROUP BY dtype, m, n, mine ORDER BY dtype, n, m",
    (tmpl, op)).fetchall()
best = {}
for dt, m, n, mine, pct in rows:
    best.setdefault((dt, m, n), [None, None])[mine] = pct
win = dict(((dt, m, n), t) for dt, m, n, t in c.execute(
    "SELECT w.dtype, w.m, w.n, r.template FROM winners w JOIN results r ON r.id = w.result_id "
    "WHERE w.op = ?", (op,)))
print(f"{'shape':24} {'others':>7} {tmpl:>20}  winner")
for (dt, m, n), (other, mine) in sorted(best.items()):
    f = lambda v: f"{v:7.1f}" if v is not None else "      -"
    print(f"{dt:5} {m:>7} x {n:<8} {f(other)} {f(mine):>20}  {win.get((dt, m, n), '-')}")
