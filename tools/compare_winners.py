"""How close the sweep's rounds come to timing every variant in full.

Usage: python3 tools/compare_winners.py ROUNDS.db FULL.db
ROUNDS.db comes from `autotune sweep`, FULL.db from `autotune sweep
--full-timing` of the same config on the same GPU. For each shape, the
winner the rounds chose is looked up in FULL.db (same template and params)
and compared with FULL.db's fastest variant. Prints the share of shapes whose
chosen winner is within 2% of the best.
"""
import sqlite3
import sys


def winners(path):
    db = sqlite3.connect(path)
    rows = db.execute(
        "SELECT w.dtype, w.m, w.n, r.template, r.params FROM winners w "
        "JOIN results r ON r.id = w.result_id").fetchall()
    return {(d, m, n): (t, p) for d, m, n, t, p in rows}


def full_times(path):
    db = sqlite3.connect(path)
    times = {}
    for d, m, n, t, p, us in db.execute(
            "SELECT dtype, m, n, template, params, time_us FROM results "
            "WHERE kind = 'variant' AND status = 'ok' AND time_us > 0"):
        times.setdefault((d, m, n), {})[(t, p)] = us
    return times


def main():
    chosen, full = winners(sys.argv[1]), full_times(sys.argv[2])
    within, worst, missing = 0, (0.0, None), 0
    shapes = sorted(set(chosen) & set(full))
    for shape in shapes:
        best = min(full[shape].values())
        mine = full[shape].get(chosen[shape])
        if mine is None:
            missing += 1
            continue
        ratio = mine / best - 1
        within += ratio <= 0.02
        if ratio > worst[0]:
            worst = (ratio, shape)
    n = len(shapes)
    print(f"{within}/{n} shapes ({100.0 * within / max(n, 1):.1f}%) within 2% of the best "
          f"full timing; worst {100 * worst[0]:.2f}% at {worst[1]}; {missing} not comparable")


if __name__ == "__main__":
    main()
