#!/usr/bin/env python3
"""The best passing variant of each template per shape in a sweep database
(an A/B of templates swept side by side: tools/device_stage.sh --ab), with
the count of results by template and status. With PARAM, the best of each
value of that parameter too (an A/B of one template's new parameter).

    tools/ab_best.py DB [PARAM]
"""
import collections
import sqlite3
import sys


def param_value(params, name):
    for item in params.replace(" ", ",").split(","):
        key, _, value = item.partition("=")
        if key == name:
            return value
    return "?"


def main(path, group=None):
    db = sqlite3.connect(path)
    rows = db.execute("SELECT dtype, m, n, template, params, status, time_us, pct_copy "
                      "FROM results").fetchall()
    counts = collections.Counter()
    best = {}
    for dtype, m, n, template, params, status, time_us, pct in rows:
        counts[(template, status)] += 1
        if status != "ok" or time_us is None:
            continue
        label = template if group is None else f"{template} {group}={param_value(params, group)}"
        key = (dtype, m, n, label)
        if key not in best or time_us < best[key][0]:
            best[key] = (time_us, pct or 0.0, params)
    for (template, status), n in sorted(counts.items()):
        print(f"{template} {status}: {n}")
    for shape in sorted({k[:3] for k in best}):
        print("%s %dx%d:" % shape)
        for key in sorted(k for k in best if k[:3] == shape):
            time_us, pct, params = best[key]
            print(f"  {key[3]:<28} {time_us:9.1f} us {pct:6.1f}%  {params}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: ab_best.py DB [PARAM]")
    main(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None)
