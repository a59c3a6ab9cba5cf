#!/usr/bin/env python3
"""Two libraries' peer benchmark CSVs side by side (python -m
autotune_dispatch.peers, the same shapes: an A/B of two builds or two
databases run in one call, e.g. `ops-peers.sh OP ... --lib OTHER.so --db
OTHER.db` after the run of this build). For each flush: the geometric mean
of A's time over B's, and of the best of torch and torch.compile (from
whichever CSV has them) over each library's, with how many shapes each is
level with that peer (within 2%) or ahead; -v prints every shape.

  python3 tools/peers_ab.py A.csv B.csv [-v]
  python3 tools/peers_ab.py A1.csv,A2.csv B1.csv,B2.csv [-v]

Rounds (comma-separated CSVs a side, run A B A B in one call so that the
order of the runs does not decide): each shape's time is the geometric
mean over its side's rounds, and A's rounds against each other (A/A) say
how much of A/B is the call's noise.
"""
import argparse
import collections
import csv
import math


def load(path):
    """{(dtype, M, N, flush): {method: us}} of the rows that ran."""
    times = collections.defaultdict(dict)
    for r in csv.DictReader(open(path)):
        if r.get("status", "ok") == "ok":
            times[(r["dtype"], int(r["M"]), int(r["N"]), r["flush"])][r["method"]] = float(r["us"])
    return times


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def load_rounds(paths):
    """The rounds' {(dtype, M, N, flush): {method: us}}, each time the
    geometric mean over the rounds that have it, and the rounds apart."""
    rounds = [load(p) for p in paths.split(",")]
    merged = {}
    for k in set().union(*rounds):
        methods = set().union(*(r.get(k, {}) for r in rounds))
        merged[k] = {m: geomean([r[k][m] for r in rounds if m in r.get(k, {})]) for m in methods}
    return merged, rounds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("-v", action="store_true", help="every shape")
    args = ap.parse_args()
    (a, a_rounds), (b, _) = load_rounds(args.a), load_rounds(args.b)
    for flush in ("clean", "dirty"):
        a_b, peer_a, peer_b = [], [], []
        for k in sorted(b, key=lambda k: (k[1] * k[2], k)):
            if k[3] != flush or "lib" not in b[k] or "lib" not in a.get(k, {}):
                continue
            peers = [t.get(m) for t in (a[k], b[k]) for m in ("torch", "compile")]
            peer = min(p for p in peers if p is not None) if any(p is not None for p in peers) else None
            ta, tb = a[k]["lib"], b[k]["lib"]
            a_b.append(ta / tb)
            if peer is not None:
                peer_a.append(peer / ta)
                peer_b.append(peer / tb)
            if args.v:
                extra = f"  peer {peer:8.2f}  peer/A {peer / ta:.3f}  peer/B {peer / tb:.3f}" if peer else ""
                print(f"{flush} {k[0]:5s} {k[1]:8d} x {k[2]:8d}  A {ta:8.2f}  B {tb:8.2f}  A/B {ta / tb:.3f}{extra}")
        if not a_b:
            continue
        line = f"{flush}: {len(a_b)} shapes; A/B {geomean(a_b):.3f}"
        if peer_a:
            line += (f"; best peer / A {geomean(peer_a):.3f} (level or ahead {sum(r >= 0.98 for r in peer_a)}),"
                     f" best peer / B {geomean(peer_b):.3f} ({sum(r >= 0.98 for r in peer_b)})")
        if len(a_rounds) > 1:
            first, last = a_rounds[0], a_rounds[-1]
            aa = [first[k]["lib"] / last[k]["lib"] for k in first
                  if k[3] == flush and "lib" in first[k] and "lib" in last.get(k, {})]
            line += f"; A/A (A's first round over its last) {geomean(aa):.3f}" if aa else ""
        print(line)


if __name__ == "__main__":
    main()
