#!/usr/bin/env python3
"""Where a cross-entropy call's time goes beyond its row kernel: the
library's forward + backward (as the peer benchmark calls it) under the
PyTorch profiler, on the GPU machine. Prints, per shape, each kernel's
median time a call, their sum and the call's time by CUDA events (the
loop queued behind a GPU sleep, L2 flushed before each call, as
autotune_dispatch.peers times it): the difference is the GPU's idle time
between the kernels.

  PYTHONPATH=python python3 tools/ce_call_profile.py [--shapes 4096x32000,1024x128256]
      [--dtype bf16] [--calls 30]
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


def call_of(M, N, dtype):
    x = (torch.randn(M, N, device="cuda") * 4).to(dtype).requires_grad_(True)
    t = torch.randint(0, N, (M,), device="cuda")

    def run():
        loss = atd.cross_entropy(x, t, check_targets=False)
        return torch.autograd.grad(loss, x)[0]
    return run


def kernel_times(run, flush, calls):
    """{kernel name: median us a call} over calls, the flush's kernels left out."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            flush("clean")
            run()
        torch.cuda.synchronize()
    flush_names = set()
    with profile(activities=[ProfilerActivity.CUDA]) as fprof:
        flush("clean")
        torch.cuda.synchronize()
    for e in fprof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            flush_names.add(e.name)
    times = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA or e.name in flush_names:
            continue
        times.setdefault(e.name, []).append(e.time_range.elapsed_us())
    return {name: (statistics.median(v), len(v) // calls) for name, v in times.items()}


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
    args = ap.parse_args()
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[args.dtype]
    flush, hold = peers.Flusher(), peers.GpuHold()
    for shape in args.shapes.split(","):
        M, N = (int(v) for v in shape.split("x"))
        run = call_of(M, N, dtype)
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
        del run
        torch.cuda.empty_cache()
        time.sleep(0.1)


if __name__ == "__main__":
    main()
