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
and the library compile it) and launched as the library launches its
cross_entropy_plain_kernel (else cross_entropy_kernel) for loss and gradient (int64 targets, every tenth
ignored, no options, the sum's scale of 1; clusters by their compiled
dims), checked against float64 first (the loss, and the gradient p -
onehot). The methods take turns round by round; the table gives the median
of the rounds (their spread) and the fraction of the copy's time.
"""
import argparse
import csv
import ctypes
import os
import re
import statistics
import subprocess
import sys
import tempfile

import torch

from autotune_dispatch import peers

IGNORE = -100
MAX_DYN_SMEM_ATTR = 8  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
NON_PORTABLE_CLUSTER_ATTR = 16  # CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
CE_WRITE_GRAD = 2


class Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.modules = []

    def check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: CUDA error {rc}")

    def load(self, cubin, launch):
        image = open(cubin, "rb").read()
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(mod), image), "cuModuleLoadData")
        self.modules.append(mod)
        # the options are plain: the plain kernel where the code has one
        # (launch_cross_entropy's choice), else the every-option one
        if self.lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"cross_entropy_plain_kernel"):
            self.check(self.lib.cuModuleGetFunction(ctypes.byref(fn), mod,
                                                    b"cross_entropy_kernel"),
                       "cuModuleGetFunction")
        if launch["dyn_smem"] > 48 * 1024:
            self.check(self.lib.cuFuncSetAttribute(fn, MAX_DYN_SMEM_ATTR, launch["dyn_smem"]),
                       "cuFuncSetAttribute")
        if launch["ctas_per_row"] > 8:
            self.check(self.lib.cuFuncSetAttribute(fn, NON_PORTABLE_CLUSTER_ATTR, 1),
                       "cuFuncSetAttribute(non-portable cluster)")
        per_sm = ctypes.c_int()
        self.check(self.lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(per_sm), fn, launch["threads"], ctypes.c_size_t(launch["dyn_smem"])),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor")
        return fn, per_sm.value

    def launch(self, fn, grid, launch, dx, x, t, loss, lse, M, V):
        # dispatch/runtime/launch_geometry.h: cross_entropy_kernel's arguments
        args = [ctypes.c_uint64(dx.data_ptr()), ctypes.c_uint64(x.data_ptr()),
                ctypes.c_uint64(t.data_ptr()), ctypes.c_uint64(loss.data_ptr()),
                ctypes.c_uint64(lse.data_ptr()), ctypes.c_uint64(0),
                ctypes.c_longlong(M), ctypes.c_longlong(V),
                ctypes.c_longlong(dx.stride(0)), ctypes.c_longlong(x.stride(0)),
                ctypes.c_longlong(IGNORE), ctypes.c_float(0.0), ctypes.c_float(0.0),
                ctypes.c_float(0.0), ctypes.c_uint(CE_WRITE_GRAD)]
        ptrs = (ctypes.c_void_p * len(args))(
            *[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in args])
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self.check(self.lib.cuLaunchKernel(fn, grid, 1, 1, launch["threads"], 1, 1,
                                           launch["dyn_smem"], stream, ptrs, None),
                   "cuLaunchKernel")


def parse_spec(path):
    shapes = {}
    for lineno, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        if len(line) < 5:
            sys.exit(f"{path}:{lineno}: expected DTYPE M N TEMPLATES_DIR TEMPLATE [PARAM=VALUE...]")
        dt, M, N, folder, template, params = (line[0], int(line[1]), int(line[2]), line[3],
                                              line[4], line[5:])
        shapes.setdefault((dt, M, N), []).append((folder, template, params))
    return shapes


def compile_variant(args, dt, M, N, folder, template, params, tmp):
    cubin = os.path.join(tmp, f"v{len(os.listdir(tmp))}.cubin")
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


def grid_of(launch, per_sm, M, sms):
    rows = -(-M // launch["rows_per_cta"])
    if launch["ctas_per_row"] > 1:
        return rows * launch["ctas_per_row"]
    return min(rows, per_sm * sms) if launch["persistent"] else rows


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
    ap.add_argument("--autotune", default="build-dev/autotune")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--csv")
    args = ap.parse_args(argv)
    shapes = parse_spec(args.spec)
    torch.cuda.init()
    torch.empty(1, device="cuda")
    drv = Driver()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    flush, hold = peers.Flusher(), peers.GpuHold()
    rows = []
    tmp = tempfile.mkdtemp(prefix="ce-variant-bench-")
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
        for folder, template, params in variants:
            name = f"{os.path.basename(folder.rstrip('/'))}: {template} {' '.join(params)}"
            try:
                cubin, launch = compile_variant(args, dt, M, N, folder, template, params, tmp)
                fn, per_sm = drv.load(cubin, launch)
            except (subprocess.CalledProcessError, RuntimeError) as e:
                print(f"{dt} {M}x{N} {name}: not run ({getattr(e, 'stderr', '') or e})".strip())
                continue
            grid = grid_of(launch, per_sm, M, sms)
            methods[name] = (lambda fn=fn, grid=grid, launch=launch:
                             drv.launch(fn, grid, launch, dx, x, t, loss, lse, M, N))
        for name, fn in list(methods.items()):
            dx.fill_(float("nan"))
            loss.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            el = peers.rel_err(loss, ref_loss)
            eg = peers.rel_err(dx, ref_grad)
            if not (el <= 1e-5 and eg <= peers.TOLERANCE[dt]):
                print(f"{dt} {M}x{N} {name}: check failed (loss {el:.2e}, grad {eg:.2e})", flush=True)
                del methods[name]
        methods["copy"] = lambda: dx.copy_(x)
        times = {(n, m): [] for n in methods for m in ("clean", "dirty")}
        for r in range(args.rounds):
            for name, fn in methods.items():
                for mode in ("clean", "dirty"):
                    us = peers.median_us(fn, flush, mode, args.warmup, args.reps, hold)
                    times[(name, mode)].append(us)
                    rows.append({"dtype": dt, "M": M, "N": N, "round": r, "method": name,
                                 "flush": mode, "us": f"{us:.3f}"})
        copy_c = statistics.median(times[("copy", "clean")])
        print(f"\n{dt} {M}x{N} (median of {args.rounds} rounds of {args.reps}; min-max; copy/us)")
        for name in methods:
            c, d = times[(name, "clean")], times[(name, "dirty")]
            print(f"  {statistics.median(c):9.2f} ({min(c):.2f}-{max(c):.2f})  "
                  f"{statistics.median(d):9.2f}  {copy_c / statistics.median(c):5.3f}  {name}",
                  flush=True)
        del x, dx, ref_grad
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["dtype", "M", "N", "round", "method", "flush", "us"])
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
