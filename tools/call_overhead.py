"""The host's cost of a call at small shapes, where it is the call's time:
wall-clock microseconds a call over many back-to-back calls (the GPU
waited for once at the end), for autotune_dispatch's eager path, its custom
ops called directly (the path eager calls took before they launched
directly) and torch. Forward without a gradient, and forward + backward.
Run on the GPU machine:

  PYTHONPATH=python python3 tools/call_overhead.py [--shape 64x1024] [--dtype bfloat16]
                                                  [--profile CASE]

--profile CASE (e.g. "softmax forward + backward") prints where the eager
path's host time goes instead: cProfile over its calls, the functions of
the most own time.
"""
import argparse
import cProfile
import pstats
import statistics
import time

import torch

import autotune_dispatch as atd


def per_call_us(fn, calls, rounds=5):
    """Median over rounds of the wall time a call, in us."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="64x1024")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--profile", metavar="CASE", help="cProfile the eager path of CASE")
    a = ap.parse_args()
    M, N = (int(v) for v in a.shape.split("x"))
    x = torch.randn(M, N, device="cuda", dtype=getattr(torch, a.dtype))
    dy = torch.randn_like(x)
    ops = torch.ops.autotune_dispatch
    xg = x.clone().requires_grad_()
    cases = [
        ("softmax forward", {
            "atd eager": lambda: atd.softmax(x),
            "atd custom op": lambda: ops.softmax(x, False),
            "torch": lambda: torch.softmax(x, -1)}),
        ("log_softmax forward", {
            "atd eager": lambda: atd.log_softmax(x),
            "atd custom op": lambda: ops.log_softmax(x, False),
            "torch": lambda: torch.log_softmax(x, -1)}),
        ("softmax_backward", {
            "atd eager": lambda: atd.softmax_backward(x, dy),
            "atd custom op": lambda: ops.softmax_backward(x, dy),
            "torch": lambda: torch._softmax_backward_data(dy, x, -1, x.dtype)}),
        ("softmax forward + backward", {
            "atd eager": lambda: atd.softmax(xg).backward(dy),
            "atd custom op": lambda: ops.softmax(xg, False).backward(dy),
            "torch": lambda: torch.softmax(xg, -1).backward(dy)}),
    ]
    if a.profile:
        fn = dict(cases)[a.profile]["atd eager"]
        per_call_us(fn, 100, rounds=1)  # warm: the first calls compile and cache
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(a.calls):
            fn()
        torch.cuda.synchronize()
        prof.disable()
        print(f"{a.dtype} {M} x {N}, {a.profile}: cProfile over {a.calls} eager calls")
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return
    print(f"{a.dtype} {M} x {N}: us a call (wall clock, {a.calls} calls back to back)")
    for what, fns in cases:
        row = "  ".join(f"{k} {per_call_us(f, a.calls):6.1f}" for k, f in fns.items())
        print(f"{what:28s} {row}")


if __name__ == "__main__":
    main()
