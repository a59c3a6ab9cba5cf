#!/usr/bin/env python3
"""Each kernel launch of an ncu raw CSV (`ncu --csv --page raw`, the metrics
of build-dev/kernel-durations.sh --stalls): its duration, instructions
issued (warp-level), SM cycles, launch shape and its six largest warp stall
reasons, as average warps stalled per issued instruction. A stall's cycles
are about that ratio times the instructions; at launch-bound shapes the gap
to a peer is in its dependent chain, so compare the two kernels' products.

  python3 tools/ncu_stalls.py CSV [KERNEL_SUBSTRING...]

Kernels whose names hold none of the substrings (default: every launch)
are left out; triton's always show, as the peers.
"""
import csv
import sys

STALL = "smsp__average_warps_issue_stalled_"


def main():
    rows = list(csv.reader(open(sys.argv[1])))
    wanted = sys.argv[2:]
    start = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    hdr = rows[start]
    col = {h: j for j, h in enumerate(hdr)}
    stalls = [h for h in hdr if h.startswith(STALL)]
    for r in rows[start + 2:]:  # the line after the header holds units
        if len(r) != len(hdr):
            continue
        name = r[col["Kernel Name"]]
        if wanted and "triton" not in name and not any(w in name for w in wanted):
            continue
        value = lambda k: r[col[k]] if k in col else "-"
        top = sorted(((float(r[col[c]].replace(",", "") or 0),
                       c[len(STALL):].replace("_per_issue_active.ratio", "")) for c in stalls),
                     reverse=True)[:6]
        print(f"{name[:40]:40s} {value('gpu__time_duration.sum'):>8s} ns"
              f"  inst {value('smsp__inst_executed.sum'):>6s}  cycles {value('sm__cycles_elapsed.max'):>6s}"
              f"  grid {value('launch__grid_size')} block {value('launch__block_size')}"
              f" regs {value('launch__registers_per_thread')}  "
              + " ".join(f"{n}={v:.1f}" for v, n in top))


if __name__ == "__main__":
    main()
