#!/usr/bin/env python3
"""Times chosen variants of the templates beside the peers, under the peer
benchmark's conditions (python/autotune_dispatch/peers.py: a 256 MiB read
or write before each repetition, CUDA events, the loop queued behind a GPU
sleep), in one process on the GPU machine: which variant a derivation rule
should pick, measured the way the generalization run will measure it.

  PYTHONPATH=python python3 tools/variant_bench.py SPEC [--autotune build-dev/autotune]
      [--templates build-dev/templates] [--rounds 3] [--reps 60] [--csv OUT.csv]

SPEC has one line a variant, grouped by shape ('#' starts a comment):
  bf16 3 7 softmax_warp threads=128 lanes=4 rows_per_cta=32 vec=2 elems_per_thread=2
  bf16 3 7 cu:tools/probe_tiny.cu threads=32 rows_per_cta=4 -DLANES=8
      (a hand-written kernel with the same signature, compiled by nvcc with
      the -D options and -DDTYPE_BF16=1; check=0 times it unchecked)
  bf16 3 7 softmax_warp@build-dev/templates-before threads=128 ...
      (the template from another folder: a variant its manifest held valid
      before a change)
Each variant is compiled by `autotune gen --cubin` (NVRTC, as the tuner
and the library compile it) and launched as they launch it, checked
against float64 first; each shape also times torch.softmax, the Triton
tutorial's kernel, a copy, and with --compile torch.compile's softmax.
The methods of a shape take turns, a median of --reps a method and flush
per round; the table gives the median of the rounds (and their spread),
the CSV every round.
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

CU_OCCUPANCY = "cuOccupancyMaxActiveBlocksPerMultiprocessor"
MAX_DYN_SMEM_ATTR = 8  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
NON_PORTABLE_CLUSTER_ATTR = 14  # CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED


class Driver:
    """The driver calls a bench makes: load a cubin's kernel, launch it."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.modules = []

    def check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: CUDA error {rc}")

    def load(self, cubin, threads, smem, entries=(b"softmax_kernel",), cluster=1):
        """(function, CTAs a multiprocessor) of the first of entries the
        cubin defines, opted into smem bytes of dynamic shared memory and a
        cluster of that many CTAs as the library's launch_grid does."""
        image = open(cubin, "rb").read()
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(mod), image), "cuModuleLoadData")
        self.modules.append(mod)
        for entry in entries[:-1]:
            if self.lib.cuModuleGetFunction(ctypes.byref(fn), mod, entry) == 0:
                break
        else:
            self.check(self.lib.cuModuleGetFunction(ctypes.byref(fn), mod, entries[-1]),
                       "cuModuleGetFunction")
        if smem > 48 * 1024:
            self.check(self.lib.cuFuncSetAttribute(fn, MAX_DYN_SMEM_ATTR, smem), "cuFuncSetAttribute")
        if cluster > 8:
            self.check(self.lib.cuFuncSetAttribute(fn, NON_PORTABLE_CLUSTER_ATTR, 1),
                       "cuFuncSetAttribute(non-portable cluster)")
        per_sm = ctypes.c_int()
        self.check(getattr(self.lib, CU_OCCUPANCY)(ctypes.byref(per_sm), fn, threads,
                                                   ctypes.c_size_t(smem)), CU_OCCUPANCY)
        return fn, per_sm.value

    def launch_args(self, fn, grid, threads, smem, args):
        """fn on the current stream with args, ctypes values in its order."""
        ptrs = (ctypes.c_void_p * len(args))(
            *[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in args])
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self.check(self.lib.cuLaunchKernel(fn, grid, 1, 1, threads, 1, 1, smem, stream, ptrs, None),
                   "cuLaunchKernel")

    def launch(self, fn, grid, threads, smem, y, x, M, N):
        self.launch_args(fn, grid, threads, smem, [
            ctypes.c_uint64(y.data_ptr()), ctypes.c_uint64(x.data_ptr()),
            ctypes.c_longlong(M), ctypes.c_longlong(N),
            ctypes.c_longlong(y.stride(0)), ctypes.c_longlong(x.stride(0)),
            ctypes.c_uint(0)])  # flags (dispatch/runtime/launch_geometry.h)


def time_rounds(methods, args, flush, hold, rows, dt, M, N):
    """{(method, flush): [us a round]}: the methods take turns round by round,
    each a median of args.reps after args.warmup; every round into rows."""
    times = {(n, m): [] for n in methods for m in ("clean", "dirty")}
    for r in range(args.rounds):
        for name, fn in methods.items():
            for mode in ("clean", "dirty"):
                us = peers.median_us(fn, flush, mode, args.warmup, args.reps, hold)
                times[(name, mode)].append(us)
                rows.append({"dtype": dt, "M": M, "N": N, "round": r, "method": name,
                             "flush": mode, "us": f"{us:.3f}"})
    return times


def add_bench_args(ap, reps):
    """The options every variant bench takes, reps its default repetitions."""
    ap.add_argument("--autotune", default="build-dev/autotune")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=reps)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--csv")


def gpu_setup():
    """(Driver, the GPU's SMs, the L2 flusher, the GPU hold) in a started context."""
    torch.cuda.init()
    torch.empty(1, device="cuda")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    return Driver(), sms, peers.Flusher(), peers.GpuHold()


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["dtype", "M", "N", "round", "method", "flush", "us"])
        w.writeheader()
        w.writerows(rows)


def parse_spec(path, heads=("TEMPLATE",)):
    """{(dtype, M, N): [(the heads' words, [PARAM=VALUE...])]} of the lines
    DTYPE M N HEADS... [PARAM=VALUE...] ('#' starts a comment)."""
    shapes = {}
    for lineno, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        if len(line) < 3 + len(heads):
            sys.exit(f"{path}:{lineno}: expected DTYPE M N {' '.join(heads)} [PARAM=VALUE...]")
        words = tuple(line[3:3 + len(heads)])
        shapes.setdefault((line[0], int(line[1]), int(line[2])), []).append(
            (words, line[3 + len(heads):]))
    return shapes


def compile_variant(args, dt, M, N, template, params, tmp):
    """(cubin path, launch dict) for a template variant or a cu: file."""
    cubin = os.path.join(tmp, f"v{len(os.listdir(tmp))}.cubin")
    if template.startswith("cu:"):
        defines = [p for p in params if p.startswith("-D")]
        launch = dict(p.split("=", 1) for p in params if not p.startswith("-D"))
        subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-std=c++17", "-o", cubin,
                        f"-DDTYPE_{dt.upper()}=1", *defines, template[3:]], check=True)
        return cubin, {"threads": int(launch["threads"]), "rows_per_cta": int(launch["rows_per_cta"]),
                       "dyn_smem": int(launch.get("dyn_smem", 0)),
                       "persistent": int(launch.get("persistent", 0)),
                       "check": int(launch.get("check", 1))}
    # TEMPLATE@DIR: from another templates folder (manifests before a change)
    template, _, folder = template.partition("@")
    cmd = [args.autotune, "gen", "--templates", folder or args.templates, "--template", template,
           "--dtype", dt, "-M", str(M), "-N", str(N), "--cubin", cubin]
    for p in params:
        cmd += ["--param", p]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"// launch at M=\d+ N=\d+: (.*)", out)
    launch = {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())}
    if launch["cooperative"]:
        sys.exit(f"variant_bench: {template} {' '.join(params)}: cooperative launches are "
                 "not supported here")
    # a cluster's size is compiled in (__cluster_dims__): a plain launch of
    # ctas_per_row CTAs a row serves it, as the library's launch_grid does
    return cubin, launch


def grid_of(launch, per_sm, M, sms):
    """The grid launch_grid_size gives: a cluster of ctas_per_row a row
    step, else a CTA a rows_per_cta (persistent: the resident ones)."""
    rows = -(-M // launch["rows_per_cta"])
    if launch.get("ctas_per_row", 1) > 1:
        return rows * launch["ctas_per_row"]
    return min(rows, per_sm * sms) if launch["persistent"] else rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("spec")
    ap.add_argument("--templates", default="build-dev/templates")
    add_bench_args(ap, reps=60)
    ap.add_argument("--compile", action="store_true", help="time torch.compile's softmax too")
    args = ap.parse_args(argv)
    shapes = parse_spec(args.spec)
    drv, sms, flush, hold = gpu_setup()
    tutorial = peers.TutorialSoftmax() if peers.triton is not None else None
    # torch.compile as the peer benchmark makes it: a graph per shape (past
    # dynamo's default of 8 graphs it ran eager torch: the sum-reciprocal
    # bench's shapes after its eighth)
    compiled = None
    if args.compile:
        torch._dynamo.config.cache_size_limit = 1024
        compiled = torch.compile(lambda t: torch.softmax(t, dim=-1), dynamic=False)
    rows = []
    tmp = tempfile.mkdtemp(prefix="variant-bench-")
    for (dt, M, N), variants in shapes.items():
        tdt = getattr(torch, peers.TORCH_DTYPES[dt])
        torch.manual_seed(M * 131 + N)
        x = (torch.rand(M, N, device="cuda", dtype=torch.float32) * 16 - 8).to(tdt)
        ref = torch.softmax(x.double(), dim=-1)
        y = torch.empty_like(x)
        methods, unchecked = {}, set()
        for (template,), params in variants:
            cubin, launch = compile_variant(args, dt, M, N, template, params, tmp)
            fn, per_sm = drv.load(cubin, launch["threads"], launch["dyn_smem"],
                                  cluster=launch.get("ctas_per_row", 1))
            grid = grid_of(launch, per_sm, M, sms)
            name = (template + " " + " ".join(params)).strip()
            if not launch.get("check", 1):
                unchecked.add(name)
            methods[name] = (lambda fn=fn, grid=grid, launch=launch:
                             drv.launch(fn, grid, launch["threads"], launch["dyn_smem"], y, x, M, N) or y)
        methods["torch"] = lambda: torch.softmax(x, dim=-1)
        if compiled:
            methods["compile"] = lambda: compiled(x)
        if tutorial:
            methods["triton"] = lambda: tutorial(x, y) or y
        methods["copy"] = lambda: y.copy_(x)
        for name, fn in list(methods.items()):
            y.fill_(float("nan"))
            try:
                out = fn()
            except Exception as e:  # a peer that refuses or cannot run the shape (Triton)
                if name in ("torch", "triton", "compile", "copy"):
                    print(f"{dt} {M}x{N} {name}: not run ({e})", flush=True)
                    del methods[name]
                    continue
                raise
            torch.cuda.synchronize()
            if name != "copy" and name not in unchecked:
                e = peers.rel_err(out, ref)
                if not (e <= peers.TOLERANCE[dt]) or torch.isnan(out).any():
                    print(f"{dt} {M}x{N} {name}: check failed (rel err {e:.2e})", flush=True)
                    del methods[name]
        times = time_rounds(methods, args, flush, hold, rows, dt, M, N)
        print(f"\n{dt} {M}x{N} (median of {args.rounds} rounds of {args.reps}; min-max)")
        for name in methods:
            c, d = times[(name, "clean")], times[(name, "dirty")]
            print(f"  {statistics.median(c):8.3f} ({min(c):.3f}-{max(c):.3f})  "
                  f"{statistics.median(d):8.3f} ({min(d):.3f}-{max(d):.3f})  {name}", flush=True)
        del x, y, ref
    if args.csv:
        write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
