"""The library against the softmax a PyTorch user has today, in one run on
one GPU:  python -m autotune_dispatch.peers [options]

For each shape of a sweep config (default configs/generalization.yaml) it
checks every method's output against torch.softmax in float64 (relative L2
error at most 1e-5 for f32, 1e-2 for f16/bf16, no NaN), then times it with
CUDA events around each launch, the median of --reps repetitions after
--warmup, queued behind a GPU sleep so that the events time the GPU's
work and not the host's launch path (printed apart, "host us a call"),
under two L2 conditions before every repetition:
  clean: a 256 MiB read evicts the L2 and leaves it clean (as the tuner's
         flush does);
  dirty: a 256 MiB write (triton.testing.do_bench's cache.zero_()), whose
         dirty lines the next kernel pays to write back.
Methods (--methods picks some):
  lib        autotune_dispatch.softmax with the database --db
  lib_nodb   the same with no database (the seed winners, or the built-in)
  lib_exact  with --exact-db (a sweep of the config's own shapes)
  lib_tuned  with --db and online tuning (a cache of its own): its first
             call, in the check, times the nearest winners' variants
  torch      torch.softmax
  triton     the Triton tutorial's fused softmax (the seeds' persistent
             kernel, fp32 math)
  compile    torch.compile(torch.softmax), one graph per shape
  copy       y.copy_(x): the same bytes moved by PyTorch's copy
Writes a CSV (--csv): dtype,M,N,flush,method,status,us,gbps,rel_err,
served_by,gpu, one row per shape, flush and method (status "ok", "check
failed", "fails: ...", "unavailable"), which `autotune report --peers`
draws; then prints a summary: the library against its exact winner and
against the best peer (--summary: only that, from an existing CSV, no GPU).

  python -m autotune_dispatch.peers --db autotune.db --exact-db gen.db --csv out.csv
  python -m autotune_dispatch.peers -c configs/seeds-benchmark.yaml --db seeds.db \\
      --methods lib,torch,triton,compile,copy --csv seeds-peers.csv
  python -m autotune_dispatch.peers ... --first-call   # the first call's cost instead

PyTorch (and Triton, for its method) are needed for the measurement only.
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys
import tempfile
import time
import warnings

try:
    import torch
except ImportError:  # --summary and the config reader need no GPU and no PyTorch
    torch = None

try:
    import triton
    import triton.language as tl
except ImportError:  # the CSV says "unavailable"
    triton = None

from . import handle as handle_mod
from . import torch_ops as _torch_ops

TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}
TOLERANCE = {"f32": 1e-5, "f16": 1e-2, "bf16": 1e-2}
FLUSH_BYTES = 256 << 20
MAX_TRITON_BLOCK = 1 << 17
METHODS = ("lib", "lib_nodb", "lib_exact", "lib_tuned", "torch", "triton", "compile", "copy")
PEERS = ("torch", "triton", "compile")
COLUMNS = ["dtype", "M", "N", "flush", "method", "status", "us", "gbps", "rel_err", "served_by",
           "gpu"]


# ---- the shapes of a sweep config -------------------------------------------

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


def rel_err(y, ref):
    d = (y.double() - ref)
    return (d.norm() / ref.norm()).item()


def served_by(h, dt, M, N, op="softmax"):
    """What serves op at the shape through handle h, in one line."""
    try:
        c = h.query(dt, M, N, op=op)
    except Exception:  # noqa: BLE001 (the CSV only says it is unknown)
        return "?"
    return f"{c.level}: {c.template} {c.params}"


def open_handles(args):
    """The library's handles by method; the no-database one warns, on purpose."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", handle_mod.DatabaseWarning)
        handles = {"lib": handle_mod.Handle(args.db, jit="off" if args.no_jit else None),
                   "lib_nodb": handle_mod.Handle("/nonexistent/no.db"),
                   "lib_exact": handle_mod.Handle(args.exact_db, fallback=False)
                   if args.exact_db else None}
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


def measure(args):
    wanted = args.methods.split(",") if args.methods else list(METHODS)
    unknown = [m for m in wanted if m not in METHODS]
    if unknown:
        sys.exit(f"peers: unknown method {', '.join(unknown)} (known: {', '.join(METHODS)})")
    handles = open_handles(args)
    log = args.op == "log_softmax"
    op_fn = torch.log_softmax if log else torch.softmax
    # the tutorial computes softmax only: log_softmax's CSV says "unavailable"
    tutorial = TutorialSoftmax() if triton is not None and "triton" in wanted and not log else None
    torch._dynamo.config.cache_size_limit = 1024
    compiled = torch.compile(lambda t: op_fn(t, dim=-1), dynamic=False)
    flush = Flusher()
    hold = GpuHold()
    gpu = torch.cuda.get_device_name()
    rows = []
    shapes = shapes_of(args.config)
    lo, _, hi = args.shapes.partition(":")
    shapes = shapes[int(lo or 0): int(hi) if hi else len(shapes)]
    skip = done_shapes(args.csv) if args.resume else set()
    appending = args.append or (args.resume and os.path.exists(args.csv))
    out = open(args.csv, "a" if appending else "w", newline="")
    writer = csv.DictWriter(out, fieldnames=COLUMNS)
    if not appending:
        writer.writeheader()
    for dt, M, N in shapes:
        if (dt, M, N) in skip:
            continue
        tdt = getattr(torch, TORCH_DTYPES[dt])
        torch.manual_seed(M * 131 + N)
        x = (torch.rand(M, N, device="cuda", dtype=torch.float32) * 16 - 8).to(tdt)
        ref = op_fn(x.double(), dim=-1)
        y = torch.empty_like(x)

        def run_lib(name):
            if log:
                _torch_ops._launch(handles[name], x, y, 0, log=True)
                return y
            return handles[name].softmax(x, out=y)

        def run_triton():
            tutorial(x, y)
            return y

        # each returns its output: the library and Triton write y, PyTorch
        # allocates (from its caching allocator, as a user's call would)
        methods = {
            "lib": lambda: run_lib("lib"),
            "lib_nodb": lambda: run_lib("lib_nodb"),
            "lib_exact": (lambda: run_lib("lib_exact")) if handles["lib_exact"] else None,
            "lib_tuned": lambda: run_lib("lib_tuned"),
            "torch": lambda: op_fn(x, dim=-1),
            "triton": run_triton if tutorial else None,
            "compile": lambda: compiled(x),
            "copy": lambda: y.copy_(x),
        }
        methods = {k: v for k, v in methods.items() if k in wanted}
        served = {k: served_by(h, dt, M, N, args.op) for k, h in handles.items() if h and k in wanted}
        fresh = []
        host = {}
        for name, fn in methods.items():
            print(f"  {dt} {M}x{N} {name}: {served.get(name, '')}", file=sys.stderr, flush=True)
            status, err = "ok", ""
            if fn is None:
                status = "unavailable"
            else:
                try:
                    y.fill_(float("nan"))
                    result = fn()
                    torch.cuda.synchronize()
                    if name == "lib_tuned":  # what the tuning chose
                        served[name] = served_by(handles[name], dt, M, N, args.op)
                    if name != "copy":
                        e = rel_err(result, ref)
                        err = f"{e:.2e}"
                        if not (e <= TOLERANCE[dt]) or torch.isnan(result).any():
                            status = "check failed"
                except Exception as exc:  # noqa: BLE001 (a peer that cannot run this shape)
                    status = "fails: " + str(exc).splitlines()[0][:120] if str(exc) else "fails"
                    torch.cuda.synchronize()
            for mode in ("clean", "dirty"):
                us = median_us(fn, flush, mode, args.warmup, args.reps, hold) \
                    if status == "ok" else math.nan
                gbps = 2 * M * N * x.element_size() / us / 1e3 if status == "ok" else math.nan
                fresh.append({"dtype": dt, "M": M, "N": N, "flush": mode, "method": name,
                              "status": status, "us": f"{us:.3f}", "gbps": f"{gbps:.1f}",
                              "rel_err": err, "served_by": served.get(name, ""), "gpu": gpu})
            if status == "ok":
                host[name] = host_us(fn)
        writer.writerows(fresh)  # shape by shape: a run cut short keeps what it measured
        out.flush()
        rows += fresh
        print(f"{dt} {M}x{N}: " + ", ".join(f"{r['method']} {r['gbps']}" for r in fresh
                                            if r["flush"] == "clean"), flush=True)
        print(f"  host us a call: " + ", ".join(f"{k} {v:.1f}" for k, v in host.items()), flush=True)
        del x, y, ref
    for h in handles.values():
        if h:
            h.close()
    out.close()
    return rows


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def summarize(rows):
    """Prints, per shape and flush, the library against its exact winner
    and the best peer, then the geometric means."""
    by = {}
    for r in rows:
        by.setdefault((r["dtype"], r["M"], r["N"], r["flush"]), {})[r["method"]] = r
    ratios = {"exact": [], "tuned": [], "peer": {"clean": [], "dirty": []}}
    print("\n%-22s %-5s %9s %9s %9s %9s %9s  %s" % ("shape", "flush", "lib", "exact", "best peer", "nodb",
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
            ratios["peer"][k[3]].append(rp)
        if not math.isnan(exact / tuned):
            ratios["tuned"].append(exact / tuned)
        print("%-22s %-5s %9.1f %9.1f %9.1f %9.1f %9.1f  %.3f (%s) %.3f %.3f %.3f" % (
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
    handle with the persistent cache filled, and background mode."""
    cache = tempfile.mkdtemp(prefix="atd-jit-")
    print("mode,dtype,M,N,first_call_ms,served_first,served_later,later_call_ms")
    for dt, M, N in shapes_of(args.config)[: args.first_call_shapes]:
        x = torch.randn(M, N, device="cuda").to(getattr(torch, TORCH_DTYPES[dt]))
        y = torch.empty_like(x)
        for mode, options, cache_file in (("block-cold", {}, "cold.db"), ("block-cached", {}, "cold.db"),
                                          ("background", {"jit": "background"}, "bg.db"),
                                          ("tune", {"tune": True}, "tune.db"),
                                          ("tuned-cached", {}, "tune.db")):
            os.environ["ATD_JIT_CACHE"] = os.path.join(cache, f"{dt}-{M}-{N}-{cache_file}")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", handle_mod.DatabaseWarning)
                h = handle_mod.Handle(args.db, **options)
            torch.cuda.synchronize()
            t = time.perf_counter()
            h.softmax(x, out=y)
            torch.cuda.synchronize()
            first = (time.perf_counter() - t) * 1e3
            served_first = served_by(h, dt, M, N)
            deadline = time.perf_counter() + 30
            while mode == "background" and not served_by(h, dt, M, N).startswith("derived") \
                    and time.perf_counter() < deadline:
                time.sleep(0.01)
            t = time.perf_counter()
            h.softmax(x, out=y)
            torch.cuda.synchronize()
            later = (time.perf_counter() - t) * 1e3
            print(f"{mode},{dt},{M},{N},{first:.1f},{served_first},{served_by(h, dt, M, N)},{later:.2f}",
                  flush=True)
            h.close()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m autotune_dispatch.peers", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", help="the library's path (default: as the package finds it; "
                                  "sets $AUTOTUNE_DISPATCH_LIB)")
    ap.add_argument("--db", default="autotune.db", help="the database of the lib method")
    ap.add_argument("--exact-db", help="a sweep of the config's own shapes (lib_exact)")
    ap.add_argument("-c", "--config", default="configs/generalization.yaml")
    ap.add_argument("--op", default="softmax", choices=("softmax", "log_softmax"),
                    help="the op measured (log_softmax: torch.log_softmax the reference and "
                         "peer; the Triton tutorial unavailable)")
    ap.add_argument("--csv", default="peers.csv")
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--no-jit", type=int, default=0, help="1: the lib method without run-time derivation")
    ap.add_argument("--shapes", default=":", help="a slice of the config's shapes, e.g. 0:11")
    ap.add_argument("--append", action="store_true", help="add to --csv (a run in parts)")
    ap.add_argument("--resume", action="store_true",
                    help="add to --csv the shapes it has no rows for (a run cut short, again)")
    ap.add_argument("--methods", help=f"only these, comma-separated (of {','.join(METHODS)})")
    ap.add_argument("--summary", action="store_true", help="summarize --csv only, no GPU")
    ap.add_argument("--first-call", action="store_true")
    ap.add_argument("--first-call-shapes", type=int, default=6)
    args = ap.parse_args(argv)
    if args.lib:
        os.environ["AUTOTUNE_DISPATCH_LIB"] = args.lib
    if args.summary:
        with open(args.csv, newline="") as f:
            summarize(list(csv.DictReader(f)))
        return 0
    if torch is None or not torch.cuda.is_available():
        sys.exit("peers: needs a CUDA GPU and PyTorch with CUDA")
    torch.cuda.init()
    if args.first_call:
        first_call(args)
        return 0
    measure(args)
    with open(args.csv, newline="") as f:
        summarize(list(csv.DictReader(f)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
