"""A sweep's winners against another sweep of the same config and GPU that
timed more: a pruned sweep against an exhaustive one (`sweep
--exhaustive`), or the rounds against full timing (`sweep --full-timing`).

Usage: python3 tools/compare_winners.py SWEEP.db REFERENCE.db

Two questions, both answered on the reference's time base (the same
variant's time in REFERENCE.db), so that two runs' clocks never meet:
  kept    did SWEEP.db time a variant within 2% of the reference's best?
          (the pruning's share)
  chosen  is the winner SWEEP.db chose within 2% of the reference's best?
The second also holds the two runs' disagreement where variants differ by
less than their timing noise: each miss says whether the reference's best
was timed, and how SWEEP.db's own timing ranked it against its winner.
"""
import math
import sqlite3
import sys


def load(path):
    """Winners and variant times by (op, dtype, M, N): a family's sweep
    tunes several ops at one shape."""
    db = sqlite3.connect(path)
    winners = {(o, d, m, n): (t, p) for o, d, m, n, t, p in db.execute(
        "SELECT w.op, w.dtype, w.m, w.n, r.template, r.params FROM winners w "
        "JOIN results r ON r.id = w.result_id")}
    times = {}
    for o, d, m, n, t, p, us in db.execute(
            "SELECT op, dtype, m, n, template, params, time_us FROM results "
            "WHERE kind = 'variant' AND status = 'ok' AND time_us > 0"):
        times.setdefault((o, d, m, n), {})[(t, p)] = us
    return winners, times


def main():
    p_win, p_times = load(sys.argv[1])
    _, e_times = load(sys.argv[2])
    shapes = sorted(s for s in p_win if s in e_times)
    kept_ok = chosen_ok = 0
    logs = []
    for s in shapes:
        exh = e_times[s]
        best = min(exh.values())
        kept = [exh[v] for v in p_times.get(s, {}) if v in exh]
        kept_ok += bool(kept) and min(kept) <= 1.02 * best
        mine = exh.get(p_win[s])
        if mine is None:
            print(f"  {s}: the winner {p_win[s]} is not among the reference's results")
            continue
        logs.append(math.log(best / mine))
        if mine <= 1.02 * best:
            chosen_ok += 1
            continue
        best_v = min(exh, key=exh.get)
        own = p_times[s].get(best_v)
        note = (f"the reference's best timed; this run timed it at {own / p_times[s][p_win[s]]:.3f}"
                " x its winner" if own else "the reference's best not timed")
        print(f"  {s}: chosen {mine / best:.3f} x the reference's best ({best:.1f} us); {note}")
    n, compared = len(shapes), len(logs)
    print(f"{n} shapes: a variant timed within 2% of the reference's best at {kept_ok} "
          f"({100 * kept_ok / n:.1f}%); the chosen winner within 2% at {chosen_ok} of the "
          f"{compared} whose winner the reference timed ({100 * chosen_ok / compared:.1f}%), "
          f"geomean {math.exp(sum(logs) / compared):.4f} of the best")


if __name__ == "__main__":
    main()
