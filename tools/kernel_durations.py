#!/usr/bin/env python3
"""The library's kernels against torch.compile's at given shapes, as kernel
durations alone: run under ncu (build-dev/kernel-durations.sh), which times
each launch with its caches flushed, so a gap at launch-bound shapes is
split into the kernel's own time and what the call adds around it (the
peer benchmark's time holds both). Each shape runs its op three times
through atd and three times through torch.compile, inside NVTX ranges
named "lib SHAPE" and "compile SHAPE".

  PYTHONPATH=python python3 tools/kernel_durations.py DB --op softmax_backward f16:255:1 f32:2:1
"""
import argparse
import warnings

import torch

import autotune_dispatch as atd
from autotune_dispatch import handle as handle_mod
from autotune_dispatch import torch_ops

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def calls(op, x):
    """The library's call and the torch.compile peer's on the logits x (the
    backward ops: on y, the forward's output, and a random dy; cross_entropy:
    the loss and its backward, as the peer benchmark's fwd_bwd calls it)."""
    if op == "cross_entropy":
        x.requires_grad_(True)
        t = torch.randint(0, x.shape[1], (x.shape[0],), device=x.device)
        compiled = torch.compile(torch.nn.functional.cross_entropy)

        def step(fn):
            return lambda: torch.autograd.grad(fn(x, t), x)[0]
        return step(lambda a, b: atd.cross_entropy(a, b, check_targets=False)), step(compiled)
    if op in ("softmax", "log_softmax"):
        fn = getattr(torch, op)
        compiled = torch.compile(lambda t: fn(t, -1))
        return (lambda: getattr(atd, op)(x)), (lambda: compiled(x))
    log = op == "log_softmax_backward"
    y = (torch.log_softmax if log else torch.softmax)(x, -1)
    dy = torch.randn_like(y)
    aten = torch.ops.aten._log_softmax_backward_data if log else torch.ops.aten._softmax_backward_data
    compiled = torch.compile(lambda g, out: aten(g, out, -1, out.dtype))
    return (lambda: getattr(atd, op)(y, dy)), (lambda: compiled(dy, y))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db", help="the library's database")
    ap.add_argument("--op", default="softmax_backward",
                    choices=("softmax", "log_softmax", "softmax_backward", "log_softmax_backward",
                             "cross_entropy"))
    ap.add_argument("shapes", nargs="+", metavar="DTYPE:M:N")
    args = ap.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", handle_mod.DatabaseWarning)
        torch_ops.set_default_handle(handle_mod.Handle(args.db))
    for spec in args.shapes:
        dt, M, N = spec.split(":")
        lib, peer = calls(args.op, torch.randn(int(M), int(N), device="cuda", dtype=DTYPES[dt]))
        for _ in range(3):
            for name, fn in (("lib", lib), ("compile", peer)):
                torch.cuda.nvtx.range_push(f"{name} {spec}")
                fn()
                torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
