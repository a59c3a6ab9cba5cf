#!/usr/bin/env python3
"""Where a cross-entropy call's time goes beyond its row kernel: the
library's forward + backward (as the peer benchmark calls it) under the
PyTorch profiler, on the GPU machine. Prints, per shape, each kernel's
median time a call, their sum and the call's time by CUDA events (the
loop queued behind a GPU sleep, L2 flushed before each call, as
autotune_dispatch.peers times it): the difference is the GPU's idle time
between the kernels.

  PYTHONPATH=python python3 tools/ce_call_profile.py [--shapes 4096x32000,1024x128256]
      [--dtype bf16] [--calls 30] [--grad G] [--timeline | --host]
"""
import argparse
import cProfile
import pstats
import statistics
import time

import torch
from torch.profiler import ProfilerActivity, profile

import autotune_dispatch as atd
from autotune_dispatch import peers


def call_of(M, N, dtype, grad):
    """The forward + backward; the loss's gradient autograd's 1 (a fill
    kernel) or, given, that value (a GradScaler's scale: a pass over the
    logits' gradient)."""
    x = (torch.randn(M, N, device="cuda") * 4).to(dtype).requires_grad_(True)
    t = torch.randint(0, N, (M,), device="cuda")
    g = None if grad is None else torch.tensor(grad, device="cuda")

    def run():
        loss = atd.cross_entropy(x, t, check_targets=False)
        return torch.autograd.grad(loss, x, grad_outputs=g)[0]
    return run


def flush_kernels(flush):
    """The names of the kernels a clean flush runs."""
    with profile(activities=[ProfilerActivity.CUDA]) as fprof:
        flush("clean")
        torch.cuda.synchronize()
    return {e.name for e in fprof.events() if e.device_type == torch.autograd.DeviceType.CUDA}


def kernel_times(run, flush, calls):
    """{kernel name: median us a call} over calls, the flush's kernels left out."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            flush("clean")
            run()
        torch.cuda.synchronize()
    flush_names = flush_kernels(flush)
    times = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA or e.name in flush_names:
            continue
        times.setdefault(e.name, []).append(e.time_range.elapsed_us())
    return {name: (statistics.median(v), len(v) // calls) for name, v in times.items()}


def timeline(run, flush, hold, calls):
    """Each kernel's start and end (us) from the call's first kernel, per
    kernel name the median over calls queued behind a GPU hold (so the
    gaps are the GPU's, not the host's launch latency): where the call's
    time beyond its row kernel goes, and what overlaps what."""
    for _ in range(3):
        flush("clean")
        run()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        t = time.perf_counter()
        flush("clean")
        run()
        hold(2 * calls * (time.perf_counter() - t) * 1e6 + 1000)
        for _ in range(calls):
            flush("clean")
            run()
        torch.cuda.synchronize()
    evs = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                 key=lambda e: e.time_range.start)
    flush_names = flush_kernels(flush)
    groups, cur = [], None
    for e in evs:
        if "sleep" in e.name:
            continue
        if e.name in flush_names:
            cur = None  # the next call starts after the flush
            continue
        if cur is None:
            cur = []
            groups.append(cur)
        cur.append(e)
    spans = {}
    for g in groups[1:]:  # the first call ran before the hold
        t0 = g[0].time_range.start
        for e in g:
            spans.setdefault(e.name, []).append((e.time_range.start - t0, e.time_range.end - t0))
    for name, v in sorted(spans.items(), key=lambda kv: statistics.median(a for a, _ in kv[1])):
        print(f"  {statistics.median(a for a, _ in v):8.2f} -> {statistics.median(b for _, b in v):8.2f} us"
              f"  x {len(v) // max(1, len(groups) - 1)}  {name[:90]}")


def host_profile(run, calls):
    """The top of cProfile's table over calls of run (after a warm-up)."""
    for _ in range(5):
        run()
    torch.cuda.synchronize()
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    for _ in range(calls):
        run()
    prof.disable()
    us = (time.perf_counter() - t) / calls * 1e6
    torch.cuda.synchronize()
    print(f"  host: {us:.1f} us a call (under cProfile)")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(30)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="1024x32000,4096x32000,4096x50257,1024x128256,4096x128256")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--host", action="store_true", help="profile the host's side (cProfile)")
    ap.add_argument("--timeline", action="store_true",
                    help="each kernel's start and end within a call (calls queued behind a hold)")
    ap.add_argument("--grad", type=float,
                    help="the loss's gradient (default: autograd's 1; e.g. 1024, a GradScaler's)")
    args = ap.parse_args()
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[args.dtype]
    flush, hold = peers.Flusher(), peers.GpuHold()
    for shape in args.shapes.split(","):
        M, N = (int(v) for v in shape.split("x"))
        run = call_of(M, N, dtype, args.grad)
        if args.host:
            print(f"{args.dtype} {M} x {N}:")
            host_profile(run, args.calls)
            continue
        call_us = peers.median_us(run, flush, "clean", 5, args.calls, hold)
        ks = kernel_times(run, flush, args.calls)
        total = sum(us * n for us, n in ks.values())
        print(f"{args.dtype} {M} x {N}: call {call_us:.1f} us, kernels {total:.1f} us, "
              f"idle between them {call_us - total:.1f} us")
        for name, (us, n) in sorted(ks.items(), key=lambda kv: -kv[1][0]):
            print(f"  {us:8.2f} us x {n}  {name[:100]}")
        if args.timeline:
            print("  timeline (start -> end, us from the call's first kernel):")
            timeline(run, flush, hold, args.calls)
        del run
        torch.cuda.empty_cache()
        time.sleep(0.1)


if __name__ == "__main__":
    main()
