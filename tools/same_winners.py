"""Whether the same sweep run twice picks the same winners.

Usage: python3 tools/same_winners.py A.db B.db
Each database holds one sweep of the same config. Prints how many shapes
picked the same winner and, for the others, how far apart the two winners
are in each run's own timing (every variant has a time in each run).
"""
import sqlite3, sys
def load(f):
    c = sqlite3.connect(f)
    win = {}
    for dt, n, t, p, band in c.execute(
            "select r.dtype, r.n, r.template, r.params, w.noise_band from winners w "
            "join results r on r.id = w.result_id"):
        win[(dt, n)] = ((t, p), band)
    times = {}
    for dt, n, t, p, us in c.execute(
            "select dtype, n, template, params, time_us from results where kind = 'variant' "
            "and time_us > 0"):
        times[(dt, n, t, p)] = us
    return win, times
(w1, t1), (w2, t2) = load(sys.argv[1]), load(sys.argv[2])
same = 0; rows = []
for k in sorted(w1):
    if k not in w2: continue
    a, b = w1[k][0], w2[k][0]
    if a == b:
        same += 1; continue
    # run 1's winner in run 2's timing, and run 2's in run 1's
    r2 = t2.get(k + a, 0) / t2.get(k + b, 1)
    r1 = t1.get(k + b, 0) / t1.get(k + a, 1)
    rows.append((k, r1, r2, w1[k][1], w2[k][1]))
print("same winner on %d of %d shapes" % (same, len(w1)))
for k, r1, r2, b1, b2 in rows:
    print("%s N=%s: run 2's winner in run 1 %+.1f%% (band %.1f%%); run 1's in run 2 %+.1f%% (band %.1f%%)"
          % (k[0], k[1], 100 * (r1 - 1), 100 * b1, 100 * (r2 - 1), 100 * b2))
within = sum(1 for _, r1, r2, b1, b2 in rows if r1 - 1 <= 0.02 and r2 - 1 <= 0.02)
print("differing winners within 2%% of each other in both runs: %d of %d" % (within, len(rows)))
