#!/usr/bin/env python3
"""Checks a tuning database after the robustness scenarios (robustness.sh).

check_db.py DB SHAPES [--faults]
  integrity_check is ok; no shape has a result twice (same kind, template and
  params); each tuned shape's results come from one sweep; with SHAPES > 0,
  exactly that many shapes are tuned and each has a winner. --faults: the
  softmax_faulty variants failed with the expected reasons and fault=0 won."""
import sqlite3
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    path, shapes = sys.argv[1], int(sys.argv[2])
    db = sqlite3.connect(path)
    ok = db.execute("PRAGMA integrity_check").fetchone()[0]
    if ok != "ok":
        fail("integrity_check: " + ok)
    dups = db.execute(
        "SELECT gpu_id, dtype, m, n, kind, template, params, count(*) FROM results "
        "GROUP BY gpu_id, op, dtype, m, n, kind, template, params HAVING count(*) > 1").fetchall()
    if dups:
        fail("results stored twice: %r" % dups[:5])
    mixed = db.execute(
        "SELECT dtype, m, n, count(DISTINCT sweep_id) FROM results "
        "GROUP BY gpu_id, op, dtype, m, n HAVING count(DISTINCT sweep_id) > 1").fetchall()
    if mixed:
        fail("a shape has results of several sweeps: %r" % mixed[:5])
    tuned = db.execute("SELECT count(*) FROM winners WHERE result_id IS NOT NULL").fetchone()[0]
    if shapes and tuned != shapes:
        fail("%d shapes tuned, expected %d" % (tuned, shapes))
    if "--faults" in sys.argv:
        expect = {"1": "illegal", "2": "watchdog", "3": ""}
        for params, status, reason in db.execute(
                "SELECT params, status, coalesce(reason, '') FROM results "
                "WHERE template = 'softmax_faulty'"):
            fault = params.split("fault=")[1].split()[0]
            if fault == "0":
                if status != "ok":
                    fail("%s should pass: %s %s" % (params, status, reason))
            elif status != "launch_failed" or expect[fault] not in reason:
                fail("%s: %s %r" % (params, status, reason))
            print("  %-22s %-14s %s" % (params, status, reason[:100]))
        bad = db.execute(
            "SELECT count(*) FROM winners w JOIN results r ON r.id = w.result_id "
            "WHERE r.params NOT LIKE '%fault=0%'").fetchone()[0]
        if bad:
            fail("a faulty variant won")
    print("ok: %s: integrity ok, %d shapes tuned, no duplicates" % (path, tuned))


main()
