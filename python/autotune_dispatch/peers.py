"""The library against what a PyTorch user has today, op by op, in one run
on one GPU:  python -m autotune_dispatch.peers --op OP [options]

Ops (--op), each with its modes (--modes picks some):
  softmax, log_softmax     y from x (mode fwd)
  softmax_backward,        dx from y and dy, as autograd's backward of
  log_softmax_backward     softmax / log_softmax (mode bwd)
  cross_entropy            the mean loss over targets != -100 with the
                           gradient of the logits, the training case (mode
                           fwd_bwd), and the loss alone (mode fwd); a tenth
                           of the targets -100, as the tuner's
For each shape it checks every method's output against torch in float64
(relative L2 error, row chunk by row chunk, at most 1e-5 for f32 and 1e-2
for f16/bf16, or twice the error of the float64 answer rounded to the
dtype where that is larger: an f16 gradient of 1/n_valid-scaled
probabilities underflows for everyone; no NaN; cross_entropy: the loss and
the gradient both), then times it with CUDA events around each call, the
median of --reps repetitions after --warmup, queued behind a GPU sleep so
that the events time the GPU's work and not the host's launch path (printed
apart, "host us a call"; a method that synchronises inside, as Liger's
cross entropy does for its target count, pays its host path in its time,
as a training step would), under two L2 conditions before every
repetition:
  clean: a 256 MiB read evicts the L2 and leaves it clean (as the tuner's
         flush does);
  dirty: a 256 MiB write (triton.testing.do_bench's cache.zero_()), whose
         dirty lines the next kernel pays to write back.
Methods (--methods picks some; a method that cannot run an op, or whose
package is missing, gets rows "unavailable: why"; one that raises, "fails:
its message"; one whose output is wrong, "check failed", never timed):
  lib        the library through autotune_dispatch with the database --db:
             softmax, log_softmax, softmax_backward(y, dy),
             log_softmax_backward(y, dy), cross_entropy(logits, target)
  lib_nodb   the same with no database (the seed models' or seed winners' choice)
  lib_exact  with --exact-db (a sweep of the config's own shapes)
  lib_tuned  with --db and online tuning (a cache of its own): its first
             call, in the check, times the nearest winners' variants
  lib_twin   lib's own call under a second name (asked for, never by
             default): an A/A check of the timing, the two should agree
             (lib_nodb, lib_exact, lib_twin: the softmax ops and their
             backward; lib_tuned: softmax and log_softmax only)
  torch      torch.softmax, torch.log_softmax, aten._softmax_backward_data,
             aten._log_softmax_backward_data, F.cross_entropy (log_softmax
             and nll_loss) with torch.autograd.grad (the gradient written
             out, as autograd does)
  triton     the Triton tutorial's fused softmax (the seeds' persistent
             kernel, fp32 math; softmax only)
  compile    torch.compile of the torch method, one graph per shape
  liger      Liger-Kernel (Triton): its softmax forward and backward (rows
             up to 65536), its cross entropy (LigerCrossEntropyFunction,
             the gradient written into the logits); it has no log_softmax
  quack      QuACK (CuTe DSL): softmax forward and backward, cross entropy
  copy       the bytes a fused kernel moves at least, by PyTorch:
             y.copy_(x) (softmax, log_softmax, cross_entropy: read M x N,
             write M x N), torch.add(y, dy, out=dx) (the backward ops: two
             reads and a write)
Shapes: -c CONFIG (a sweep config's dtypes, M and N); or a grid, --dtypes x
--rows x --cols (cross_entropy's default: bf16,f16,f32 x 1..16384 rows x
vocabularies 32000, 50257, 128256, 151936, 262144); or --random SEED
--count K (drawn log-uniform, as tools/random_shapes.py; cross_entropy:
rows in [1, 16384], vocabularies in [1000, 262144]); the softmax ops'
default is configs/generalization.yaml. A shape whose M x N tensor passes
--max-gib is left out (said on stderr).
Writes a CSV (--csv): dtype,M,N,flush,method,status,us,gbps,rel_err,
served_by,gpu,op,mode,grad_err,copy_ratio, one row per shape, mode, flush
and method: gbps counts the bytes the op must move (softmax 2 M N, the
backward ops 3 M N, cross_entropy fwd_bwd 2 M N and fwd M N elements),
rel_err is the output's (cross_entropy: the loss's), grad_err the
gradient's, served_by what served the library's call or the peer's
release (e.g. liger-kernel 0.8.5), copy_ratio the method's GB/s over the copy's at that shape and
flush; `autotune report --peers` draws the softmax CSVs. Then it prints a
summary: the library against its exact winner and against the best peer
(--summary: only that, from an existing CSV, no GPU).

  python -m autotune_dispatch.peers --db autotune.db --exact-db gen.db --csv out.csv
  python -m autotune_dispatch.peers -c configs/seeds-benchmark.yaml --db seeds.db \\
      --methods lib,torch,triton,compile,copy --csv seeds-peers.csv
  python -m autotune_dispatch.peers --op cross_entropy --dtypes bf16 --csv ce.csv
  python -m autotune_dispatch.peers --op softmax_backward --random 7 --count 20 --csv sb.csv
  python -m autotune_dispatch.peers ... --first-call   # the first call's cost instead

PyTorch (and Triton, Liger-Kernel, QuACK, for their methods) are needed
for the measurement only.
"""
import argparse
import csv
import importlib
import math
import os
import random
import re
import statistics
import sys
import tempfile
import time
import warnings

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # --summary, the shapes and the CSV need no GPU and no PyTorch
    torch = None

try:
    import triton
    import triton.language as tl
except ImportError:  # the CSV says "unavailable"
    triton = None

from . import handle as handle_mod
from . import torch_ops as _torch_ops

TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
TOLERANCE = {"f32": 1e-5, "f16": 1e-2, "bf16": 1e-2}
FLUSH_BYTES = 256 << 20
MAX_TRITON_BLOCK = 1 << 17
IGNORE_INDEX = -100
# float64 reference rows at a time (512 MiB): a 16 GiB tensor's float64 copy is never whole
CHUNK_ELEMENTS = 1 << 26
DEFAULT_CONFIG = "configs/generalization.yaml"
OPS = ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward", "cross_entropy")
MODES = {"softmax": ("fwd",), "log_softmax": ("fwd",), "softmax_backward": ("bwd",),
         "log_softmax_backward": ("bwd",), "cross_entropy": ("fwd_bwd", "fwd")}
METHODS = ("lib", "lib_nodb", "lib_exact", "lib_tuned", "lib_twin", "torch", "triton", "compile", "liger",
           "quack", "copy")
# the library's variants beside lib, and the ops each is measured for: online
# tuning is the forward's; cross_entropy's call has one handle (the default)
LIB_VARIANTS = ("lib_nodb", "lib_exact", "lib_tuned", "lib_twin")
ROWS_OPS = ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward")
LIB_VARIANT_OPS = {"lib_nodb": ROWS_OPS, "lib_exact": ROWS_OPS, "lib_twin": ROWS_OPS,
                   "lib_tuned": ("softmax", "log_softmax")}
DEFAULT_METHODS = {op: tuple(m for m in METHODS if m != "lib_twin") if op in ("softmax", "log_softmax") else
                   ("lib", "lib_nodb", "torch", "compile", "liger", "quack", "copy") if op in ROWS_OPS else
                   ("lib", "torch", "compile", "liger", "quack", "copy") for op in OPS}
# which ops each peer package has, and its name in a reason
HAS_OP = {"triton": ("the Triton tutorial", {"softmax"}),
          "liger": ("Liger-Kernel", {"softmax", "softmax_backward", "cross_entropy"}),
          "quack": ("QuACK", {"softmax", "softmax_backward", "cross_entropy"})}
PEER_MODULES = {"liger": ("liger_kernel.ops.softmax", "liger_kernel.ops.cross_entropy",
                          "liger_kernel.ops.utils"),
                "quack": ("quack.softmax", "quack.cross_entropy")}
PEERS = ("torch", "triton", "compile", "liger", "quack")
# cross_entropy's grid: the vocabularies of GPT-2 (50257, unaligned), Llama 2
# (32000), Llama 3 (128256), Qwen 2 (151936) and Gemma 3 (262144)
CE_DTYPES = ("bf16", "f16", "f32")
CE_ROWS = (1, 64, 1024, 4096, 16384)
CE_VOCABS = (32000, 50257, 128256, 151936, 262144)
COLUMNS = ["dtype", "M", "N", "flush", "method", "status", "us", "gbps", "rel_err", "served_by",
           "gpu", "op", "mode", "grad_err", "copy_ratio"]


# ---- the shapes: a sweep config, a grid, or a seeded draw --------------------

def _values(text, what, where):
    """A config's M or N: an integer, a list [a, b, ...] or a range
    {from: a, to: b, step: s} (inclusive), as tuner/config.h reads them."""
    text = text.strip()
    try:
        if text.startswith("["):
            return [int(v) for v in text.strip("[]").replace("\n", " ").split(",") if v.strip()]
        if text.startswith("{"):
            fields = dict((k.strip(), int(v)) for k, v in
                          (item.split(":") for item in text.strip("{}").split(",")))
            return list(range(fields["from"], fields["to"] + 1, fields.get("step", 1)))
        return [int(text)]
    except (ValueError, KeyError) as exc:
        raise ValueError(f"{where}: cannot read {what} ({text!r}): {exc}") from None


def shapes_of(config):
    """(dtype, M, N) of every entry of a sweep config, in its order (dtype,
    then M, then N), without a YAML library: the entries' dtypes, M and N
    in the flow forms the configs use."""
    with open(config, encoding="utf-8") as f:
        text = re.sub(r"#.*", "", f.read())
    out = []
    for i, block in enumerate(re.split(r"\n\s*- op:", text)[1:], 1):
        where = f"{config}: sweep entry {i}"
        found = {}
        for key in ("dtypes", "M", "N"):
            m = re.search(rf"\b{key}:\s*(\[[^\]]*\]|\{{[^}}]*\}}|[^\n]+)", block)
            if not m:
                raise ValueError(f"{where}: no {key}")
            found[key] = m.group(1)
        dtypes = [d.strip() for d in found["dtypes"].strip("[]").split(",") if d.strip()]
        Ms, Ns = _values(found["M"], "M", where), _values(found["N"], "N", where)
        out += [(dt, M, N) for dt in dtypes for M in Ms for N in Ns]
    return out


def grid_shapes(dtypes, rows, cols):
    """Every (dtype, M, N) of the grid, dtype first, then M, then N."""
    return [(dt, M, N) for dt in dtypes for M in rows for N in cols]


def random_shapes(seed, count, op):
    """count distinct (dtype, M, N) drawn from seed: M and N log-uniform,
    the dtype uniform, as tools/random_shapes.py draws them (cross_entropy:
    a language model's rows and vocabularies, not a softmax's range). The
    same seed gives the same shapes; a new report wants a new seed."""
    rng = random.Random(seed)
    m_hi, n_lo, n_hi = (16384, 1000, 262144) if op == "cross_entropy" else (1e6, 1, 4e6)
    shapes = []
    while len(shapes) < count:
        M = int(round(math.exp(rng.uniform(0, math.log(m_hi)))))
        N = int(round(math.exp(rng.uniform(math.log(n_lo), math.log(n_hi)))))
        dt = rng.choice(sorted(ELEMENT_BYTES))
        if (dt, M, N) not in shapes:
            shapes.append((dt, M, N))
    return shapes


def within_memory(shapes, max_bytes):
    """(the shapes whose M x N tensor is at most max_bytes, those left out):
    every method holds a few such tensors, torch's cross entropy four."""
    kept, dropped = [], []
    for s in shapes:
        (kept if s[1] * s[2] * ELEMENT_BYTES[s[0]] <= max_bytes else dropped).append(s)
    return kept, dropped


def int_list(text):
    """"1,64,1024" -> [1, 64, 1024] (the grid's options)."""
    return [int(v) for v in text.split(",") if v.strip()]


def shape_list(args):
    """The shapes of a run, from --random, -c, the grid options, or the op's
    default (cross_entropy: its grid; the others: DEFAULT_CONFIG), those
    over --max-gib left out, then sliced by --shapes (lo:hi)."""
    grid = args.rows or args.cols or args.dtypes
    if args.random is not None:
        shapes = random_shapes(args.random, args.count, args.op)
    elif args.config or (args.op != "cross_entropy" and not grid):
        shapes = shapes_of(args.config or DEFAULT_CONFIG)
    else:
        shapes = grid_shapes(args.dtypes.split(",") if args.dtypes else CE_DTYPES,
                             int_list(args.rows) if args.rows else CE_ROWS,
                             int_list(args.cols) if args.cols else CE_VOCABS)
    unknown = sorted({s[0] for s in shapes} - set(ELEMENT_BYTES))
    if unknown:
        raise ValueError(f"unknown dtype {', '.join(unknown)} (known: f32, f16, bf16)")
    shapes, dropped = within_memory(shapes, args.max_gib * (1 << 30))
    for dt, M, N in dropped:
        print(f"peers: {dt} {M}x{N} left out: over --max-gib {args.max_gib:g}", file=sys.stderr)
    lo, _, hi = args.shapes.partition(":")
    return shapes[int(lo or 0): int(hi) if hi else len(shapes)]


def methods_of(text, op):
    """The methods a run measures: text (comma-separated), else the op's
    defaults. Raises ValueError naming an unknown one."""
    wanted = text.split(",") if text else list(DEFAULT_METHODS[op])
    unknown = [m for m in wanted if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method {', '.join(unknown)} (known: {', '.join(METHODS)})")
    return wanted


def modes_of(text, op):
    """The modes a run measures: text (comma-separated), else all of the op's."""
    wanted = text.split(",") if text else list(MODES[op])
    unknown = [m for m in wanted if m not in MODES[op]]
    if unknown:
        raise ValueError(f"{op} has no mode {', '.join(unknown)} (it has: {', '.join(MODES[op])})")
    return wanted


# ---- why a method cannot run (the CSV's "unavailable: ..." rows) -------------

def no_op_reason(method, op):
    """Why method cannot run op whatever is installed, or None."""
    if method in LIB_VARIANT_OPS and op not in LIB_VARIANT_OPS[method]:
        return f"unavailable: {method} is measured for {', '.join(LIB_VARIANT_OPS[method])} only"
    if method in HAS_OP and op not in HAS_OP[method][1]:
        return f"unavailable: {HAS_OP[method][0]} has no {op}"
    return None


def lib_reason(atd, op):
    """Why the package atd cannot run op (its function is not there: the
    backward ops and cross_entropy are built on other branches), or None."""
    if op in ("softmax", "log_softmax") or callable(getattr(atd, op, None)):
        return None
    return f"unavailable: autotune_dispatch {getattr(atd, '__version__', '?')} has no {op}"


DISTRIBUTIONS = {"liger": "liger-kernel", "quack": "quack-kernels", "triton": "triton", "torch": "torch",
                 "compile": "torch"}


def peer_versions():
    """Each peer method's package and version, e.g. "liger-kernel 0.8.5" (a
    peer's rows say which release was measured), where installed."""
    from importlib import metadata
    out = {}
    for method, dist in DISTRIBUTIONS.items():
        try:
            out[method] = f"{dist} {metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            pass
    return out


def import_peer(name):
    """A peer package's modules by name, or None and why not (the reason a
    method's rows give: the module and the import's first line)."""
    try:
        return {m: importlib.import_module(m) for m in PEER_MODULES[name]}, None
    except Exception as exc:  # noqa: BLE001 (not installed, or installed and broken: both said)
        first = str(exc).splitlines()[0][:100] if str(exc) else ""
        return None, f"unavailable: {HAS_OP[name][0]} not importable ({type(exc).__name__}: {first})"


# ---- the Triton tutorial's kernel (persistent, grid from occupancy) --------

if triton is not None:
    @triton.jit
    def tutorial_softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows,
                                n_cols, BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
        row_start = tl.program_id(0)
        row_step = tl.num_programs(0)
        for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
            row_start_ptr = input_ptr + row_idx * input_row_stride
            col_offsets = tl.arange(0, BLOCK_SIZE)
            mask = col_offsets < n_cols
            row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf")).to(tl.float32)
            row_minus_max = row - tl.max(row, axis=0)
            numerator = tl.exp(row_minus_max)
            denominator = tl.sum(numerator, axis=0)
            out = numerator / denominator
            tl.store(output_ptr + row_idx * output_row_stride + col_offsets, out, mask=mask)


def tutorial_reason(M, N):
    """Why the tutorial's kernel cannot run an M x N shape, or None: its row
    offsets, row_idx * stride, are int32 products, which overflow past
    2^31 elements into an illegal address that ends the process's CUDA
    context (f16 183195 x 12025 on the H200, 2026-11-28)."""
    if (M - 1) * N > 2**31 - 1:  # the last row's offset
        return "unavailable: the Triton tutorial's int32 row offsets overflow past 2^31 elements"
    return None


class TutorialSoftmax:
    """The tutorial's host side: num_warps 8, num_stages from shared memory,
    programs = SMs x occupancy from the compiled kernel's registers."""

    def __init__(self):
        p = torch.cuda.get_device_properties(0)
        self.sms = p.multi_processor_count
        self.regs = p.regs_per_multiprocessor
        self.smem = p.shared_memory_per_block_optin
        self.cache = {}

    def __call__(self, x, y):
        n_rows, n_cols = x.shape
        block = triton.next_power_of_2(n_cols)
        if block > MAX_TRITON_BLOCK:
            # Not attempted: at 2^20 Triton's compile ran for minutes on the
            # H100 machine; blocks of 2^15 and more already fail for shared memory
            raise RuntimeError(f"BLOCK_SIZE {block} > {MAX_TRITON_BLOCK}: not attempted "
                               "(the kernel holds the whole row; larger blocks run out of resources)")
        stages = 4 if self.smem > 200000 else 2
        key = (block, x.dtype)
        if key not in self.cache:
            k = tutorial_softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), n_rows, n_cols,
                                               BLOCK_SIZE=block, num_stages=stages, num_warps=8,
                                               grid=(1,))
            k._init_handles()
            occupancy = self.regs // max(1, k.n_regs * 32 * 8)
            if k.metadata.shared:
                occupancy = min(occupancy, self.smem // k.metadata.shared)
            if occupancy < 1:
                raise RuntimeError(f"does not fit: {k.n_regs} registers, {k.metadata.shared} B shared")
            self.cache[key] = (k, self.sms * occupancy)
        k, programs = self.cache[key]
        k[(min(programs, n_rows), 1, 1)](y, x, x.stride(0), y.stride(0), n_rows, n_cols, block, stages)


# ---- timing -----------------------------------------------------------------

class Flusher:
    def __init__(self):
        self.buf = torch.empty(FLUSH_BYTES // 4, dtype=torch.float32, device="cuda")
        self.buf.zero_()
        self.sink = torch.empty(1, dtype=torch.float32, device="cuda")

    def __call__(self, mode):
        if mode == "dirty":
            self.buf.zero_()
        else:
            torch.amax(self.buf, dim=0, out=self.sink[0])


class GpuHold:
    """Keeps the GPU busy for a while (torch.cuda._sleep, calibrated once),
    so that the host can queue a whole timed loop behind it: the events
    then time the GPU's work, never a GPU left waiting for a slow launch.
    Without it, a method whose host path is slower than the flush (the
    library through Python, torch.compile's guards: 30-50 us a call) timed
    its own launch latency at small shapes (bf16 8192 x 255 through the
    library: 27 us in one run, 8.2 in the next)."""

    def __init__(self):
        torch.cuda._sleep(1000)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(1_000_000)
        end.record()
        torch.cuda.synchronize()
        self.cycles_per_us = 1_000_000 / (start.elapsed_time(end) * 1e3)

    def __call__(self, us):
        torch.cuda._sleep(int(us * self.cycles_per_us))


def median_us(fn, flush, mode, warmup, reps, hold=None):
    """The median GPU time of fn over reps repetitions, each after flush(mode)."""
    for _ in range(warmup):
        flush(mode)
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    if hold is not None:  # the host's time for the loop, twice over, plus 1 ms
        t = time.perf_counter()
        flush(mode)
        fn()
        hold(2 * reps * (time.perf_counter() - t) * 1e6 + 1000)
    for i in range(reps):
        flush(mode)
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3


def interleaved_median_us(fns, flush, mode, warmup, reps, hold=None, chunk=10):
    """The median GPU time of each of fns ({name: fn}) over reps
    repetitions, each after flush(mode), the methods taking turns call by
    call (from a rotating first, so none always follows the same one). One
    method's run of calls settles on a level that another run may not
    share: at 4 us shapes on the H200 a copy measured 3.8 us in one run
    and 4.3 in the next (results/h200/tiny-peers-h200.csv), more than the
    gaps between methods; taking turns gives every method the same levels.
    The loop is queued chunk repetitions at a time, each behind a hold of
    twice the host's time for it: a hold before each call, sized by that
    method's own host time (flush and call, once). One hold a chunk was used
    up by a method that waits for the GPU (Liger-Kernel's backward compares
    its upstream gradient with 1 on the host), and the methods after it in
    the chunk timed their own launches (the library's cross-entropy at bf16
    1024 x 32000: 337 us against 45)."""
    names = list(fns)
    for name in names:
        for _ in range(warmup):
            flush(mode)
            fns[name]()
    torch.cuda.synchronize()
    host = {}
    for name in names if hold is not None else ():
        t = time.perf_counter()
        flush(mode)
        fns[name]()
        host[name] = time.perf_counter() - t
        torch.cuda.synchronize()
    times = {name: [] for name in names}
    for first in range(0, reps, chunk):
        n = min(chunk, reps - first)
        events = []
        for i in range(first, first + n):
            k = i % len(names)
            for name in names[k:] + names[:k]:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                if hold is not None:
                    hold(2 * host[name] * 1e6 + 20)
                flush(mode)
                start.record()
                fns[name]()
                end.record()
                events.append((name, start, end))
        torch.cuda.synchronize()
        for name, start, end in events:
            times[name].append(start.elapsed_time(end) * 1e3)
    return {name: statistics.median(v) for name, v in times.items()}


def host_us(fn, calls=200):
    """The host's time for one call of fn, GPU work left queued (what a
    program pays where its host path, not the GPU, is the bottleneck)."""
    fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    spent = (time.perf_counter() - t) / calls * 1e6
    torch.cuda.synchronize()
    return spent


# ---- checking against float64 -------------------------------------------------

def errors(result, reference, dt):
    """(the relative L2 error of result against the float64 answer, that of
    the float64 answer rounded to dt: what the dtype itself loses).
    reference(rows) gives the answer for a slice of rows, so that the
    float64 copy of a large tensor is made a chunk at a time. A NaN or
    infinity in result gives a NaN or infinite error."""
    M, N = result.shape
    tdt = getattr(torch, TORCH_DTYPES[dt])
    d2 = r2 = f2 = 0.0
    step = max(1, CHUNK_ELEMENTS // max(1, N))
    for i in range(0, M, step):
        rows = slice(i, min(M, i + step))
        ref = reference(rows)
        d2 += (result[rows].double() - ref).square().sum().item()
        r2 += ref.square().sum().item()
        f2 += (ref.to(tdt).double() - ref).square().sum().item()
    if r2 == 0:
        return (0.0 if d2 == 0 else math.inf), 0.0
    return math.sqrt(d2 / r2), math.sqrt(f2 / r2)


def rel_err(y, ref):
    """The relative L2 error of y against a float64 ref held whole
    (tools/variant_bench.py's check)."""
    d = (y.double() - ref)
    return (d.norm() / ref.norm()).item()


def passes(err, floor, dt):
    """The check: within the dtype's tolerance, or within twice what the
    dtype's own rounding of the answer loses (NaN never passes)."""
    return err <= max(TOLERANCE[dt], 2 * floor)


def fmt_err(err):
    return "" if err is None else f"{err:.2e}"


def served_by(h, dt, M, N, op="softmax"):
    """What serves op at the shape through handle h, in one line."""
    try:
        c = h.query(dt, M, N, op=op)
    except Exception:  # noqa: BLE001 (the CSV only says it is unknown)
        return "?"
    return f"{c.level}: {c.template} {c.params}"


def open_handles(args, wanted):
    """The library's handles by method, those wanted (lib always: it is the
    default handle of the ops beyond softmax); the no-database one warns,
    on purpose."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", handle_mod.DatabaseWarning)
        handles = {"lib": handle_mod.Handle(args.db, jit="off" if args.no_jit else None)}
        if "lib_nodb" in wanted:
            handles["lib_nodb"] = handle_mod.Handle(no_db=True)
        if "lib_exact" in wanted and args.exact_db:
            handles["lib_exact"] = handle_mod.Handle(args.exact_db, fallback=False)
        if "lib_tuned" in wanted:
            saved = os.environ.get("ATD_JIT_CACHE")
            os.environ["ATD_JIT_CACHE"] = os.path.join(tempfile.mkdtemp(prefix="atd-tune-"), "jit.db")
            handles["lib_tuned"] = handle_mod.Handle(args.db, tune=True)
            if saved is None:
                del os.environ["ATD_JIT_CACHE"]
            else:
                os.environ["ATD_JIT_CACHE"] = saved
    return handles


def done_shapes(path):
    """The (dtype, M, N) that an existing CSV has rows for (--resume)."""
    if not os.path.exists(path):
        return set()
    with open(path, newline="") as f:
        return {(r["dtype"], int(r["M"]), int(r["N"])) for r in csv.DictReader(f)}


# ---- the ops: inputs, float64 references and each method's call ---------------

class Context:
    """What every shape of a run shares: the library's handles, the peer
    packages' modules, the compiled functions, the flush, the hold and the
    GPU's name."""

    def __init__(self, args, wanted):
        import autotune_dispatch as atd  # this package: its ops beyond softmax, when it has them
        self.atd = atd
        self.handles = open_handles(args, wanted)
        _torch_ops.set_default_handle(self.handles["lib"])  # what atd's module-level ops use
        self.peers = {name: import_peer(name) for name in PEER_MODULES if name in wanted}
        self.versions = peer_versions()
        self.tutorial = TutorialSoftmax() if triton is not None and "triton" in wanted \
            and args.op == "softmax" else None
        self.compiled = {}
        torch._dynamo.config.cache_size_limit = 1024
        self.flush = Flusher()
        self.hold = GpuHold()
        self.gpu = torch.cuda.get_device_name()

    def handle_or_reason(self, name):
        """The library handle a method names (lib, lib_nodb, lib_exact,
        lib_twin), or the reason it has none, as a method's cell says it."""
        h = self.handles.get(name)
        if h is None:
            return None, "unavailable: no --exact-db" if name == "lib_exact" else "unavailable"
        return h, None

    def compile(self, key, fn):
        """torch.compile(fn), made once per key (then one graph per shape)."""
        if key not in self.compiled:
            self.compiled[key] = torch.compile(fn, dynamic=False)
        return self.compiled[key]


class Case:
    """One op at one shape and mode: each method's call (or why it has
    none), the check of a first call's result ((passes, rel_err, grad_err)),
    the bytes a method moves and those the copy moves, and what to poison
    with NaN before a check (outputs written in place)."""

    def __init__(self, methods, check, nbytes, copy_bytes, poison=lambda: None):
        self.methods, self.check, self.nbytes, self.copy_bytes, self.poison = \
            methods, check, nbytes, copy_bytes, poison


def package_calls(ctx, op, build):
    """The peer packages' calls for op, build[name](its modules) making
    each; where a package has no such op or cannot be imported, the reason."""
    out = {}
    for name, make in build.items():
        mods, reason = ctx.peers.get(name, (None, "unavailable: not asked for"))
        out[name] = no_op_reason(name, op) or reason or make(mods)
    return out


def logits(dt, M, N):
    """The input every op starts from: uniform in [-8, 8), seeded by the
    shape (in place: a 16 GiB f32 tensor has no room for temporaries)."""
    torch.manual_seed(M * 131 + N)
    x = torch.rand(M, N, device="cuda", dtype=torch.float32)
    x.mul_(16).sub_(8)
    return x.to(getattr(torch, TORCH_DTYPES[dt]))


def softmax_cases(ctx, op, dt, M, N, modes):
    """softmax and log_softmax (mode fwd): the library's variants write y."""
    log = op == "log_softmax"
    op_fn = torch.log_softmax if log else torch.softmax
    x = logits(dt, M, N)
    y = torch.empty_like(x)

    def lib(name):
        h, reason = ctx.handle_or_reason(name)
        if h is None:
            return reason
        if log:
            return lambda: (_torch_ops._launch(h, x, y, 0, log=True), y)[1]
        return lambda: h.softmax(x, out=y)

    def tutorial():
        ctx.tutorial(x, y)
        return y

    compiled = ctx.compile(op, lambda t: op_fn(t, dim=-1))
    methods = {name: lib(name) for name in ("lib",) + LIB_VARIANTS if name != "lib_twin"}
    methods["lib_twin"] = methods["lib"]
    methods.update(torch=lambda: op_fn(x, dim=-1), compile=lambda: compiled(x), copy=lambda: y.copy_(x),
                   triton=no_op_reason("triton", op) or tutorial_reason(M, N) or
                   (tutorial if ctx.tutorial else "unavailable: Triton not importable"))
    # torch, compile, Liger and QuACK allocate their output, as a user's call would
    methods.update(package_calls(ctx, op, {
        "liger": lambda m: lambda: m["liger_kernel.ops.softmax"]._softmax_forward(x)[0],
        "quack": lambda m: lambda: m["quack.softmax"].softmax_fwd(x)}))

    def check(result):
        err, floor = errors(result, lambda rows: op_fn(x[rows].double(), dim=-1), dt)
        return passes(err, floor, dt), err, None

    nbytes = 2 * M * N * x.element_size()
    yield "fwd", Case(methods, check, nbytes, nbytes, poison=lambda: y.fill_(math.nan))


def liger_softmax_backward(mods, y, dy):
    """Liger's softmax backward as its autograd calls it (its settings raise
    past 65536 elements a row: the row is one Triton block)."""
    block, warps = mods["liger_kernel.ops.utils"].calculate_settings(y.shape[-1])
    return mods["liger_kernel.ops.softmax"]._softmax_backward(dy, y, block, warps, False)


def backward_cases(ctx, op, dt, M, N, modes):
    """softmax_backward and log_softmax_backward (mode bwd): dx from the
    forward's output y (of the logits) and a random dy."""
    log = op == "log_softmax_backward"
    y = (torch.log_softmax if log else torch.softmax)(logits(dt, M, N), dim=-1)
    dy = torch.randn_like(y)
    dx = torch.empty_like(y)
    aten = torch.ops.aten._log_softmax_backward_data if log else torch.ops.aten._softmax_backward_data
    compiled = ctx.compile(op, lambda g, out: aten(g, out, -1, out.dtype))

    def lib_variant(name):
        """The library with another handle than the default (the call's
        output allocated, as autotune_dispatch's op allocates it)."""
        h, reason = ctx.handle_or_reason(name)
        if h is None:
            return reason

        def call():
            out = torch.empty_like(y)
            _torch_ops._launch_grad(h, y, dy, out, log)
            return out
        return call

    methods = {"torch": lambda: aten(dy, y, -1, y.dtype), "compile": lambda: compiled(dy, y),
               "copy": lambda: torch.add(y, dy, out=dx),
               "lib": lib_reason(ctx.atd, op) or (lambda: getattr(ctx.atd, op)(y, dy))}
    methods.update({name: lib_variant(name) for name in ("lib_nodb", "lib_exact")})
    methods["lib_twin"] = methods["lib"]
    methods.update(package_calls(ctx, op, {
        "liger": lambda m: lambda: liger_softmax_backward(m, y, dy),
        "quack": lambda m: lambda: m["quack.softmax"].softmax_bwd(dy, y)}))

    def reference(rows):
        yr, g = y[rows].double(), dy[rows].double()
        if log:
            return g - yr.exp() * g.sum(-1, keepdim=True)
        return yr * (g - (g * yr).sum(-1, keepdim=True))

    def check(result):
        err, floor = errors(result, reference, dt)
        return passes(err, floor, dt), err, None

    nbytes = 3 * M * N * y.element_size()
    yield "bwd", Case(methods, check, nbytes, nbytes)


def targets(M, V):
    """M targets in [0, V), every tenth from the sixth on IGNORE_INDEX (the
    tuner's tenth ignored; rows 0-4 always count: M = 1 has a loss)."""
    t = torch.randint(0, V, (M,), device="cuda")
    t[5::10] = IGNORE_INDEX
    return t


def ce_reference(x, t):
    """The float64 mean loss, and a function giving the float64 gradient's
    rows (the gradient is as large as the logits: made a chunk at a time)."""
    n_valid = (t != IGNORE_INDEX).sum().item()
    step = max(1, CHUNK_ELEMENTS // x.shape[1])
    total = 0.0
    for i in range(0, x.shape[0], step):
        lp = torch.log_softmax(x[i:i + step].double(), dim=-1)
        total += F.nll_loss(lp, t[i:i + step], ignore_index=IGNORE_INDEX, reduction="sum").item()

    def grad(rows):
        g = torch.softmax(x[rows].double(), dim=-1)
        tr = t[rows]
        valid = (tr != IGNORE_INDEX).nonzero().squeeze(1)
        g[valid, tr[valid]] -= 1.0
        g[tr == IGNORE_INDEX] = 0.0
        return g / n_valid

    return total / n_valid, grad


def autograd_call(loss_fn, leaf, t, backward):
    """loss_fn(leaf, t) as a training step calls it: (loss, dlogits) through
    torch.autograd.grad (nothing accumulates from call to call), or under
    no_grad (loss, None)."""
    if backward:
        def run():
            loss = loss_fn(leaf, t)
            return loss, torch.autograd.grad(loss, leaf)[0]
    else:
        def run():
            with torch.no_grad():
                return loss_fn(leaf, t), None
    return run


def cross_entropy_cases(ctx, op, dt, M, N, modes):
    """cross_entropy: mode fwd_bwd (loss and dlogits) and fwd (the loss)."""
    x = logits(dt, M, N)
    t = targets(M, N)
    ref_loss, ref_grad = ce_reference(x, t)
    g = torch.empty_like(x)

    def torch_ce(z, tt):
        return F.cross_entropy(z, tt, ignore_index=IGNORE_INDEX)

    def liger_ce(m):
        fn = m["liger_kernel.ops.cross_entropy"].LigerCrossEntropyFunction
        # (input, target, weight, ignore_index, lse_square_scale, label_smoothing, reduction,
        # softcap, return_z_loss, return_token_accuracy, return_predicted_tokens), all given:
        # its backward returns a gradient for each; the loss is the first of its outputs
        return lambda z, tt: fn.apply(z, tt, None, IGNORE_INDEX, 0.0, 0.0, "mean", None, False, False,
                                      False)[0]

    def quack_ce(m):
        return lambda z, tt: m["quack.cross_entropy"].cross_entropy(z, tt, ignore_index=IGNORE_INDEX,
                                                                     reduction="mean")

    compiled = ctx.compile(op, torch_ce)
    for mode in modes:
        backward = mode == "fwd_bwd"

        def leaf(own=False):
            # a method's own view of x, with its gradient asked for; Liger
            # writes the gradient into its input, so it gets a copy of its own
            return (x.detach().clone() if own else x.detach()).requires_grad_(backward)

        methods = {"torch": autograd_call(torch_ce, leaf(), t, backward),
                   "compile": autograd_call(compiled, leaf(), t, backward),
                   "copy": lambda: g.copy_(x)}
        reason = lib_reason(ctx.atd, op)
        methods["lib"] = reason or autograd_call(
            lambda z, tt: ctx.atd.cross_entropy(z, tt, ignore_index=IGNORE_INDEX,
                                              check_targets=False), leaf(), t, backward)
        methods.update(package_calls(ctx, op, {
            "liger": lambda m: autograd_call(liger_ce(m), leaf(own=backward), t, backward),
            "quack": lambda m: autograd_call(quack_ce(m), leaf(), t, backward)}))

        def check(result):
            loss, grad = result
            lerr, lfloor = errors(loss.detach().reshape(1, 1).float(), lambda rows: torch.full(
                (1, 1), ref_loss, dtype=torch.float64, device="cuda"), dt)
            ok, gerr = passes(lerr, lfloor, dt), None
            if grad is not None:
                gerr, gfloor = errors(grad, ref_grad, dt)
                ok = ok and passes(gerr, gfloor, dt)
            return ok, lerr, gerr

        nbytes = M * N * x.element_size()
        yield mode, Case(methods, check, 2 * nbytes if backward else nbytes, 2 * nbytes)


CASES = {"softmax": softmax_cases, "log_softmax": softmax_cases, "softmax_backward": backward_cases,
         "log_softmax_backward": backward_cases, "cross_entropy": cross_entropy_cases}


# ---- measuring: check, time, write -----------------------------------------------

def failure(exc):
    """A method's exception as a status: "fails: " and its first line."""
    text = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
    return "fails: " + text


def check_method(case, name, fn):
    """(status, rel_err, grad_err) of a method's first call, checked."""
    if not callable(fn):
        return fn or "unavailable", None, None
    try:
        case.poison()
        result = fn()
        torch.cuda.synchronize()
        if name == "copy":
            return "ok", None, None
        ok, err, gerr = case.check(result)
        return ("ok" if ok else "check failed"), err, gerr
    except Exception as exc:  # noqa: BLE001 (a method that cannot run this shape)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        return failure(exc), None, None


def csv_row(key, method, flush, status, us, nbytes, err, gerr, served, gpu):
    """One CSV row; us and gbps "nan" unless the status is ok. "_gbps"
    (unrounded, not written) is what copy_ratio divides."""
    dt, M, N, op, mode = key
    ok = status == "ok"
    gbps = nbytes / us / 1e3 if ok else math.nan
    return {"dtype": dt, "M": M, "N": N, "flush": flush, "method": method, "status": status,
            "us": f"{us:.3f}" if ok else "nan", "gbps": f"{gbps:.1f}", "rel_err": fmt_err(err),
            "served_by": served, "gpu": gpu, "op": op, "mode": mode, "grad_err": fmt_err(gerr),
            "copy_ratio": "", "_gbps": gbps}


def fill_copy_ratio(rows):
    """copy_ratio of each ok row: its GB/s over the copy's at the same shape,
    mode and flush (1: as fast as the bytes it must move allow, by PyTorch's copy)."""
    def key(r):
        return r["dtype"], r["M"], r["N"], r["mode"], r["flush"]
    copy = {key(r): r["_gbps"] for r in rows if r["method"] == "copy" and r["status"] == "ok"}
    for r in rows:
        if r["status"] == "ok" and copy.get(key(r)):
            r["copy_ratio"] = f"{r['_gbps'] / copy[key(r)]:.3f}"
    return rows


def run_case(ctx, case, key, wanted, args):
    """Checks, then times under both flushes, each wanted method of case:
    its CSV rows, and the host's time a call of each method timed."""
    dt, M, N, op, mode = key
    served = dict(ctx.versions)  # a peer's: its release; the library's: what serves the shape
    served.update({k: served_by(h, dt, M, N, op) for k, h in ctx.handles.items() if k in wanted})
    checked, ok = {}, {}
    for name in wanted:
        fn = case.methods.get(name) or no_op_reason(name, op) or "unavailable"
        print(f"  {dt} {M}x{N} {mode} {name}: {served.get(name, '')}", file=sys.stderr, flush=True)
        checked[name] = check_method(case, name, fn)
        if checked[name][0] == "ok":
            ok[name] = fn
            if name == "lib_tuned":  # what the tuning chose
                served[name] = served_by(ctx.handles[name], dt, M, N, op)
    if args.sequential:  # each method's repetitions in a run of their own
        times = {flush: {name: median_us(fn, ctx.flush, flush, args.warmup, args.reps, ctx.hold)
                         for name, fn in ok.items()} for flush in ("clean", "dirty")}
    else:
        times = {flush: interleaved_median_us(ok, ctx.flush, flush, args.warmup, args.reps, ctx.hold)
                 if ok else {} for flush in ("clean", "dirty")}
    rows, host = [], {}
    for name in wanted:
        status, err, gerr = checked[name]
        nbytes = case.copy_bytes if name == "copy" else case.nbytes
        for flush in ("clean", "dirty"):
            rows.append(csv_row(key, name, flush, status, times[flush].get(name, math.nan), nbytes,
                                err, gerr, served.get(name, ""), ctx.gpu))
        if name in ok:  # about 50 ms of GPU work: 200 calls of a 40 ms step would take 8 s
            us = times["clean"][name]
            host[name] = host_us(ok[name], calls=max(5, min(200, int(50_000 / us))))
    return fill_copy_ratio(rows), host


def open_csv(path, append):
    """The CSV's file and writer; the header unless appending."""
    out = open(path, "a" if append else "w", newline="")
    writer = csv.DictWriter(out, fieldnames=COLUMNS, extrasaction="ignore")
    if not append:
        writer.writeheader()
    return out, writer


def measure(args, shapes, wanted, modes):
    ctx = Context(args, wanted)
    skip = done_shapes(args.csv) if args.resume else set()
    out, writer = open_csv(args.csv, args.append or (args.resume and os.path.exists(args.csv)))
    rows = []
    for dt, M, N in shapes:
        if (dt, M, N) in skip:
            continue
        done = []
        try:
            for mode, case in CASES[args.op](ctx, args.op, dt, M, N, modes):
                fresh, host = run_case(ctx, case, (dt, M, N, args.op, mode), wanted, args)
                writer.writerows(fresh)  # as measured: a run cut short keeps what it has
                out.flush()
                rows += fresh
                done.append(mode)
                print(f"{dt} {M}x{N} {mode} GB/s (of the copy's): " + ", ".join(
                    f"{r['method']} {r['gbps']}" + (f" ({r['copy_ratio']})" if r["copy_ratio"] else "")
                    for r in fresh if r["flush"] == "clean"), flush=True)
                print("  host us a call: " + ", ".join(f"{k} {v:.1f}" for k, v in host.items()), flush=True)
                del case
        except torch.cuda.OutOfMemoryError as exc:  # the inputs or references of a shape too large
            fresh = [csv_row((dt, M, N, args.op, mode), name, flush, failure(exc), math.nan, 0, None, None,
                             "", ctx.gpu) for mode in modes if mode not in done for name in wanted
                     for flush in ("clean", "dirty")]
            writer.writerows(fresh)
            rows += fresh
            print(f"{dt} {M}x{N}: {failure(exc)}", flush=True)
        torch.cuda.empty_cache()
    for h in ctx.handles.values():
        h.close()
    out.close()
    return rows


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def summary_label(row):
    """The flush, and the mode where an op has another than fwd (a CSV of
    cross_entropy: "clean fwd_bwd", "clean fwd")."""
    mode = row.get("mode") or "fwd"
    return row["flush"] if mode == "fwd" and row.get("op", "softmax") in ("softmax", "log_softmax") \
        else f"{row['flush']} {mode}"


def summarize(rows):
    """Prints, per shape and flush, the library against its exact winner
    and the best peer, then the geometric means."""
    by = {}
    for r in rows:
        by.setdefault((r["dtype"], r["M"], r["N"], summary_label(r)), {})[r["method"]] = r
    ratios = {"exact": [], "tuned": [], "peer": {}}
    print("\n%-22s %-13s %9s %9s %9s %9s %9s  %s" % ("shape", "flush", "lib", "exact", "best peer", "nodb",
                                                "tuned", "lib/peer lib/exact nodb/torch tuned/exact"))
    for k, m in by.items():
        def us(name):
            r = m.get(name)
            return float(r["us"]) if r and r["status"] == "ok" else math.nan
        peers = {p: us(p) for p in PEERS if not math.isnan(us(p))}
        best = min(peers, key=peers.get) if peers else None
        lib, exact, nodb, tuned = us("lib"), us("lib_exact"), us("lib_nodb"), us("lib_tuned")
        rp = peers[best] / lib if best else math.nan
        re_ = exact / lib
        if not math.isnan(re_):
            ratios["exact"].append(re_)
        if not math.isnan(rp):
            ratios["peer"].setdefault(k[3], []).append(rp)
        if not math.isnan(exact / tuned):
            ratios["tuned"].append(exact / tuned)
        print("%-22s %-13s %9.1f %9.1f %9.1f %9.1f %9.1f  %.3f (%s) %.3f %.3f %.3f" % (
            f"{k[0]} {k[1]}x{k[2]}", k[3], lib, exact, peers.get(best, math.nan), nodb, tuned, rp, best,
            re_, us("torch") / nodb, exact / tuned))
    for flush, values in ratios["peer"].items():
        if values:
            print(f"\nlibrary / best peer ({flush}, time ratio peer/lib): geomean {geomean(values):.3f} "
                  f"over {len(values)} shapes, ahead or level at {sum(v >= 1 for v in values)}")
    if ratios["exact"]:
        print(f"library / exact-tuned (time ratio exact/lib): geomean {geomean(ratios['exact']):.3f}, "
              f"min {min(ratios['exact']):.3f}")
    if ratios["tuned"]:
        print(f"online-tuned / exact-tuned (exact/tuned): geomean {geomean(ratios['tuned']):.3f}, "
              f"min {min(ratios['tuned']):.3f}")


def first_call(args):
    """The first call of an untuned shape: blocking (empty cache), a new
    handle with the persistent cache filled, background mode, and online
    tuning (waiting for the candidates compiled within ATD_TUNE_WAIT_MS,
    its default, and for all of them). settle_ms: from the first call until
    the tuned winner is in the cache (a second handle's query says tuned)."""
    cache = tempfile.mkdtemp(prefix="atd-jit-")
    print("mode,dtype,M,N,first_call_ms,served_first,served_later,later_call_ms,settle_ms")
    for dt, M, N in shapes_of(args.config or DEFAULT_CONFIG)[: args.first_call_shapes]:
        x = torch.randn(M, N, device="cuda").to(getattr(torch, TORCH_DTYPES[dt]))
        y = torch.empty_like(x)
        for mode, options, cache_file, wait in (
                ("block-cold", {}, "cold.db", None), ("block-cached", {}, "cold.db", None),
                ("background", {"jit": "background"}, "bg.db", None),
                ("tune", {"tune": True}, "tune.db", None),
                ("tuned-cached", {}, "tune.db", None),
                ("tune-wait-all", {"tune": True}, "tune-all.db", "-1"),
                ("tune-background", {"tune": True, "jit": "background"}, "tune-bg.db", None)):
            os.environ["ATD_JIT_CACHE"] = os.path.join(cache, f"{dt}-{M}-{N}-{cache_file}")
            if wait is None:
                os.environ.pop("ATD_TUNE_WAIT_MS", None)
            else:
                os.environ["ATD_TUNE_WAIT_MS"] = wait
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", handle_mod.DatabaseWarning)
                h = handle_mod.Handle(args.db, **options)
                probe = handle_mod.Handle(args.db)
            os.environ.pop("ATD_TUNE_WAIT_MS", None)
            torch.cuda.synchronize()
            t = time.perf_counter()
            h.softmax(x, out=y)
            torch.cuda.synchronize()
            first = (time.perf_counter() - t) * 1e3
            served_first = served_by(h, dt, M, N)
            deadline = time.perf_counter() + 30
            settle = ""
            if mode.startswith("tune"):  # until the tuning is done and kept
                while not served_by(probe, dt, M, N).startswith("tuned") \
                        and time.perf_counter() < deadline:
                    time.sleep(0.005)
                settle = f"{(time.perf_counter() - t) * 1e3:.1f}"
            # background modes: the call after the worker is done (what it
            # settles on); each call re-decides once a worker's job ends
            settled = {"background": ("derived", "predicted"), "tune-background": ("tuned",)}
            while mode in settled and not served_by(h, dt, M, N).startswith(settled[mode]) \
                    and time.perf_counter() < deadline:
                time.sleep(0.01)
                h.softmax(x, out=y)
            h.softmax(x, out=y)  # re-decided, if the tuning ended since
            torch.cuda.synchronize()
            t = time.perf_counter()
            h.softmax(x, out=y)
            torch.cuda.synchronize()
            later = (time.perf_counter() - t) * 1e3
            print(f"{mode},{dt},{M},{N},{first:.1f},{served_first},{served_by(h, dt, M, N)},"
                  f"{later:.2f},{settle}", flush=True)
            probe.close()
            h.close()


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m autotune_dispatch.peers", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", help="the library's path (default: as the package finds it; "
                                  "sets $AUTOTUNE_DISPATCH_LIB)")
    ap.add_argument("--db", default="autotune.db", help="the database of the lib method")
    ap.add_argument("--exact-db", help="a sweep of the config's own shapes (lib_exact)")
    ap.add_argument("--op", default="softmax", choices=OPS, help="the op measured (default softmax)")
    ap.add_argument("--modes", help="only these of the op's modes, comma-separated "
                                    "(cross_entropy: fwd_bwd,fwd)")
    ap.add_argument("-c", "--config", help=f"the shapes of a sweep config (the softmax ops' default: "
                                           f"{DEFAULT_CONFIG})")
    ap.add_argument("--dtypes", help="the grid's dtypes, e.g. bf16,f32 (default: bf16,f16,f32)")
    ap.add_argument("--rows", help="the grid's M, e.g. 1,4096 (default: "
                                   f"{','.join(map(str, CE_ROWS))})")
    ap.add_argument("--cols", "--vocabs", dest="cols", help="the grid's N, e.g. 50257 (default: "
                                                            f"{','.join(map(str, CE_VOCABS))})")
    ap.add_argument("--random", type=int, metavar="SEED", help="shapes drawn from SEED instead")
    ap.add_argument("--count", type=int, default=20, help="how many --random draws (default 20)")
    ap.add_argument("--max-gib", type=float, default=8.0,
                    help="leave out shapes whose M x N tensor is larger (default 8)")
    ap.add_argument("--list-shapes", action="store_true", help="print the shapes and stop (no GPU)")
    ap.add_argument("--csv", default="peers.csv")
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--sequential", action="store_true",
                    help="time each method's repetitions in a run of their own, one method after "
                         "another (default: the methods take turns call by call)")
    ap.add_argument("--no-jit", type=int, default=0, help="1: the lib method without run-time derivation")
    ap.add_argument("--shapes", default=":", help="a slice of the shapes, e.g. 0:11")
    ap.add_argument("--append", action="store_true", help="add to --csv (a run in parts)")
    ap.add_argument("--resume", action="store_true",
                    help="add to --csv the shapes it has no rows for (a run cut short, again)")
    ap.add_argument("--methods", help=f"only these, comma-separated (of {','.join(METHODS)})")
    ap.add_argument("--summary", action="store_true", help="summarize --csv only, no GPU")
    ap.add_argument("--first-call", action="store_true")
    ap.add_argument("--first-call-shapes", type=int, default=6)
    args = ap.parse_args(argv)
    try:  # usage errors before any GPU work: exit 2 with the reason
        args.wanted = methods_of(args.methods, args.op)
        args.mode_list = modes_of(args.modes, args.op)
        args.shape_list = [] if args.summary or args.first_call else shape_list(args)
    except (ValueError, OSError) as exc:
        ap.error(str(exc))
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.lib:
        os.environ["AUTOTUNE_DISPATCH_LIB"] = args.lib
    if args.summary:
        with open(args.csv, newline="") as f:
            summarize(list(csv.DictReader(f)))
        return 0
    if args.list_shapes:
        for dt, M, N in args.shape_list:
            print(dt, M, N)
        return 0
    if torch is None or not torch.cuda.is_available():
        sys.exit("peers: needs a CUDA GPU and PyTorch with CUDA")
    torch.cuda.init()
    if args.first_call:
        first_call(args)
        return 0
    measure(args, args.shape_list, args.wanted, args.mode_list)
    with open(args.csv, newline="") as f:
        summarize(list(csv.DictReader(f)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
