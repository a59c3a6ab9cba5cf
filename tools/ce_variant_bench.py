#!/usr/bin/env python3
"""Times chosen cross-entropy variants, each from a templates folder of its
own, beside a copy of the same bytes, in one process on the GPU machine: the
A/B of a template change (the old folder against the new) measured in one
run, under the peer benchmark's conditions (a 256 MiB read or write before
each repetition, CUDA events, medians; python/autotune_dispatch/peers.py).

  PYTHONPATH=python python3 tools/ce_variant_bench.py SPEC [--autotune build-dev/autotune]
      [--rounds 3] [--reps 40] [--csv OUT.csv]

SPEC has one line a variant, grouped by shape ('#' starts a comment):
  bf16 4096 32000 build-dev/tpl-old cross_entropy_regs cluster=2 threads=256 vec=8 elems_per_thread=64
Each variant is compiled by `autotune gen --cubin` (NVRTC, as the tuner
and the library compile it) and launched as the library launches it for
loss and gradient: its cross_entropy_plain_kernel (else
cross_entropy_kernel), int64 targets, every tenth ignored, no options, the
sum's scale of 1, clusters by their compiled dims; checked against float64
first (the loss, and the gradient p - onehot; --unchecked times those that
fail too: a stage left out, timed by difference). The methods take turns round by round; the table gives the median
of the rounds (their spread) and the fraction of the copy's time.
"""
import argparse
import concurrent.futures
import ctypes
import os
import re
import statistics
import subprocess
import sys
import tempfile

import torch

from autotune_dispatch import peers
from variant_bench import (add_bench_args, gpu_setup, grid_of, parse_spec,  # tools/
                           time_rounds, write_csv)

IGNORE = -100
CE_WRITE_GRAD = 2
# the options are plain: the plain kernel where the code has one
# (launch_cross_entropy's choice), else the every-option one
ENTRIES = (b"cross_entropy_plain_kernel", b"cross_entropy_kernel")


def launch_ce(drv, fn, grid, launch, dx, x, t, loss, lse, M, V):
    """dispatch/runtime/launch_geometry.h: cross_entropy_kernel's arguments."""
    drv.launch_args(fn, grid, launch["threads"], launch["dyn_smem"], [
        ctypes.c_uint64(dx.data_ptr()), ctypes.c_uint64(x.data_ptr()),
        ctypes.c_uint64(t.data_ptr()), ctypes.c_uint64(loss.data_ptr()),
        ctypes.c_uint64(lse.data_ptr()), ctypes.c_uint64(0),
        ctypes.c_longlong(M), ctypes.c_longlong(V),
        ctypes.c_longlong(dx.stride(0)), ctypes.c_longlong(x.stride(0)),
        ctypes.c_longlong(IGNORE), ctypes.c_float(0.0), ctypes.c_float(0.0),
        ctypes.c_float(0.0), ctypes.c_uint(CE_WRITE_GRAD)])


def compile_variant(args, dt, M, N, folder, template, params, tmp, index):
    cubin = os.path.join(tmp, f"v{index}.cubin")
    cmd = [args.autotune, "gen", "--templates", folder, "--template", template, "--op",
           "cross_entropy", "--dtype", dt, "-M", str(M), "-N", str(N), "--cubin", cubin]
    for p in params:
        cmd += ["--param", p]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"// launch at M=\d+ N=\d+: (.*)", out)
    launch = {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())}
    if launch["cooperative"]:
        sys.exit(f"ce_variant_bench: {template}: cooperative launches are not supported here")
    return cubin, launch


def reference(x, t):
    """float64 loss per row and gradient (p - onehot; ignored rows 0)."""
    lp = torch.log_softmax(x.double(), dim=-1)
    valid = t != IGNORE
    loss = torch.zeros(x.shape[0], dtype=torch.float64, device=x.device)
    rows = valid.nonzero().squeeze(1)
    loss[rows] = -lp[rows, t[rows]]
    g = lp.exp()
    g[rows, t[rows]] -= 1.0
    g[~valid] = 0.0
    return loss, g


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("spec")
    add_bench_args(ap, reps=40)
    ap.add_argument("--unchecked", action="store_true",
                    help="time a variant that fails its check too: a template with a stage "
                    "left out, to time the stage by difference")
    args = ap.parse_args(argv)
    shapes = parse_spec(args.spec, heads=("TEMPLATES_DIR", "TEMPLATE"))
    drv, sms, flush, hold = gpu_setup()
    rows = []
    tmp = tempfile.mkdtemp(prefix="ce-variant-bench-")
    # every variant compiled at once, a process each (NVRTC is single-threaded)
    jobs = [(dt, M, N, folder, template, tuple(params))
            for (dt, M, N), variants in shapes.items() for (folder, template), params in variants]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        built = {job: pool.submit(compile_variant, args, *job[:5], job[5], tmp, i)
                 for i, job in enumerate(jobs)}
    for (dt, M, N), variants in shapes.items():
        tdt = getattr(torch, peers.TORCH_DTYPES[dt])
        torch.manual_seed(M * 131 + N)
        x = (torch.randn(M, N, device="cuda", dtype=torch.float32) * 4).to(tdt)
        t = torch.randint(0, N, (M,), device="cuda")
        t[5::10] = IGNORE
        ref_loss, ref_grad = reference(x, t)
        dx = torch.empty_like(x)
        loss = torch.empty(M, device="cuda")
        lse = torch.empty(M, device="cuda")
        methods = {}
        for (folder, template), params in variants:
            name = f"{os.path.basename(folder.rstrip('/'))}: {template} {' '.join(params)}"
            try:
                cubin, launch = built[(dt, M, N, folder, template, tuple(params))].result()
                fn, per_sm = drv.load(cubin, launch["threads"], launch["dyn_smem"], ENTRIES,
                                      launch["ctas_per_row"])
            except (subprocess.CalledProcessError, RuntimeError) as e:
                print(f"{dt} {M}x{N} {name}: not run ({getattr(e, 'stderr', '') or e})".strip())
                continue
            grid = grid_of(launch, per_sm, M, sms)
            methods[name] = (lambda fn=fn, grid=grid, launch=launch:
                             launch_ce(drv, fn, grid, launch, dx, x, t, loss, lse, M, N))
        for name, fn in list(methods.items()):
            dx.fill_(float("nan"))
            loss.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            el = peers.rel_err(loss, ref_loss)
            eg = peers.rel_err(dx, ref_grad)
            if not (el <= 1e-5 and eg <= peers.TOLERANCE[dt]):
                print(f"{dt} {M}x{N} {name}: check failed (loss {el:.2e}, grad {eg:.2e})"
                      f"{': timed anyway (--unchecked)' if args.unchecked else ''}", flush=True)
                if not args.unchecked:
                    del methods[name]
        methods["copy"] = lambda: dx.copy_(x)
        times = time_rounds(methods, args, flush, hold, rows, dt, M, N)
        copy_c = statistics.median(times[("copy", "clean")])
        print(f"\n{dt} {M}x{N} (median of {args.rounds} rounds of {args.reps}; min-max; copy/us)")
        for name in methods:
            c, d = times[(name, "clean")], times[(name, "dirty")]
            print(f"  {statistics.median(c):9.2f} ({min(c):.2f}-{max(c):.2f})  "
                  f"{statistics.median(d):9.2f}  {copy_c / statistics.median(c):5.3f}  {name}",
                  flush=True)
        del x, dx, ref_grad
    if args.csv:
        write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
