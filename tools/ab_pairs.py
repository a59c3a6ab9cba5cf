#!/usr/bin/env python3
"""An A/B of templates swept side by side (tools/device_stage.sh --ab, then
build-dev/ab.sh): per shape, each template's time over BASE's at the same
params, the median over the params both hold, and each template's best.
A template copied under another name keeps its manifest, so its variants
pair one to one with the original's; the median of the pairs is steadier
than two bests (session 60: 1-4% differences at 4 us shapes).

    tools/ab_pairs.py DB BASE
"""
import collections
import sqlite3
import statistics
import sys


def main(path, base):
    db = sqlite3.connect(path)
    times = collections.defaultdict(dict)
    for op, dtype, m, n, template, params, t in db.execute(
            "SELECT op, dtype, m, n, template, params, time_us FROM results "
            "WHERE status = 'ok' AND time_us IS NOT NULL"):
        times[(op, dtype, m, n)].setdefault(params, {})[template] = t
    for shape in sorted(times):
        ratios = collections.defaultdict(list)
        best = collections.defaultdict(lambda: float("inf"))
        for by_template in times[shape].values():
            for template, t in by_template.items():
                best[template] = min(best[template], t)
                if template != base and base in by_template:
                    ratios[template].append(t / by_template[base])
        cells = [f"{t} {statistics.median(r):.3f} ({len(r)})" for t, r in sorted(ratios.items())]
        bests = " ".join(f"{t} {b:.2f}" for t, b in sorted(best.items()))
        print(f"{shape[0]} {shape[1]} {shape[2]}x{shape[3]}: / {base}: {', '.join(cells) or '-'}; best us: {bests}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
