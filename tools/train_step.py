#!/usr/bin/env python3
"""A real training step as the proof: GPT-2 small (transformers'
GPT2LMHeadModel, random weights, bf16, eager attention) trained one step,
forward and backward, with its loss through stock PyTorch, Liger-Kernel or
the library, and its attention's softmax through torch or atd.softmax:

  variant         loss                                    attention softmax
  torch           F.cross_entropy on the bf16 logits      torch
  torch_repeat    the same, again: run-to-run noise       torch
  torch_fp32      F.cross_entropy on the logits made f32  torch
                  (what transformers' own loss does)
  liger           Liger-Kernel's LigerCrossEntropyLoss    torch
                  (the gradient written into the logits)
  atd_ce          atd.cross_entropy                       torch
  atd_ce_inplace  atd.cross_entropy(inplace_backward=True) torch
  atd_softmax     F.cross_entropy                         atd.softmax
  atd             atd.cross_entropy                       atd.softmax

Every variant starts from the same weights and batch (seeded; dropout 0),
so its loss and its gradients can be set against torch's: the loss's
absolute difference, and per parameter (the tied embedding, which takes
the loss's gradient first; the first layer's attention, the deepest; the
last layer's MLP; the final layer norm) the largest absolute difference
and the relative L2 error of its gradient. torch_repeat says how far two
runs of the same code differ. Then each variant's step is timed (CUDA
events around forward + backward, --warmup steps first, the median of
--reps), with the peak memory of the timed steps
(torch.cuda.max_memory_allocated). A variant whose package is missing
(Liger-Kernel; the library's cross_entropy, built elsewhere) gets a row
"unavailable: why"; one that raises, "fails: its message". Prints a table
and writes --csv.

  python3 tools/train_step.py --csv results/h200/train-step-h200.csv
  python3 tools/train_step.py --variants torch,atd --batch 8 --reps 5

Needs a CUDA GPU, PyTorch and transformers; the library through
PYTHONPATH=python (AUTOTUNE_DISPATCH_LIB, --db as the peer benchmark).
"""
import argparse
import contextlib
import csv
import importlib
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

# name: (the loss, whether the attention's softmax goes through atd.softmax, what it is)
VARIANTS = {
    "torch": ("torch", False, "F.cross_entropy (bf16 logits); torch softmax"),
    "torch_repeat": ("torch", False, "torch again: the run-to-run noise"),
    "torch_fp32": ("torch_fp32", False, "F.cross_entropy of the logits made f32 (transformers' loss)"),
    "liger": ("liger", False, "Liger-Kernel LigerCrossEntropyLoss; torch softmax"),
    "atd_ce": ("atd", False, "atd.cross_entropy; torch softmax"),
    "atd_ce_inplace": ("atd_inplace", False, "atd.cross_entropy(inplace_backward=True); torch softmax"),
    "atd_softmax": ("torch", True, "F.cross_entropy; atd.softmax in attention"),
    "atd": ("atd", True, "atd.cross_entropy and atd.softmax in attention"),
}
# the parameters whose gradients are compared: short name -> name in the model
# ({last}: the last layer's index)
PARAMS = {"wte": "transformer.wte.weight", "h0_attn": "transformer.h.0.attn.c_attn.weight",
          "last_mlp": "transformer.h.{last}.mlp.c_proj.weight", "ln_f": "transformer.ln_f.weight"}
COLUMNS = ["variant", "status", "loss", "loss_diff", "grad_max_abs"] + \
    [f"grad_rel_{p}" for p in PARAMS] + \
    ["step_ms", "tokens_per_s", "peak_mib", "batch", "seq", "layers", "vocab", "dtype", "gpu", "what"]


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help=f"comma-separated, of {','.join(VARIANTS)} (torch first: the reference)")
    ap.add_argument("--batch", type=int, default=16,
                    help="sequences a step (default 16; halved until a step fits)")
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--embd", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--autocast", action="store_true",
                    help="f32 weights under bf16 autocast instead of bf16 weights (autocast runs "
                         "F.cross_entropy in f32: torch and torch_fp32 are then the same)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--db", help="the library's database (default: $AUTOTUNE_DB, else autotune.db)")
    ap.add_argument("--csv", default="train-step.csv")
    args = ap.parse_args(argv)
    args.variant_list = [v for v in args.variants.split(",") if v]
    unknown = [v for v in args.variant_list if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant {', '.join(unknown)} (known: {', '.join(VARIANTS)})")
    if not args.variant_list or args.variant_list[0] != "torch":
        ap.error("the first variant must be torch: the others are set against it")
    if args.batch < 1 or args.seq < 2 or args.reps < 1 or args.warmup < 0:
        ap.error("--batch and --reps must be positive, --seq at least 2, --warmup not negative")
    return args


def missing_reason(variant, atd, liger):
    """Why a variant cannot run here (its package absent), or None. atd: the
    package or None; liger: the Liger module or the reason it is not there."""
    loss, through_atd, _ = VARIANTS[variant]
    if (loss.startswith("atd") or through_atd) and atd is None:
        return "unavailable: autotune_dispatch not importable"
    if loss.startswith("atd") and not callable(getattr(atd, "cross_entropy", None)):
        return f"unavailable: autotune_dispatch {getattr(atd, '__version__', '?')} has no cross_entropy"
    if loss == "liger" and isinstance(liger, str):
        return liger
    return None


def import_liger():
    """Liger-Kernel's loss module, or why not (a string)."""
    try:
        return importlib.import_module("liger_kernel.transformers.cross_entropy")
    except Exception as exc:  # noqa: BLE001 (absent or broken: both said)
        first = str(exc).splitlines()[0][:100] if str(exc) else ""
        return f"unavailable: Liger-Kernel not importable ({type(exc).__name__}: {first})"


def import_atd(db):
    """The library's package, its default handle on db when given; None
    where it cannot be imported."""
    try:
        import autotune_dispatch as atd
    except Exception:  # noqa: BLE001 (its variants say unavailable)
        return None
    if db:
        atd.set_default_handle(atd.Handle(db))
    return atd


def loss_function(kind, atd, liger):
    """The loss of (logits [tokens, vocab], labels [tokens]), mean over
    labels != -100, for a variant's loss kind."""
    import torch.nn.functional as F
    if kind == "torch":
        return F.cross_entropy
    if kind == "torch_fp32":
        return lambda logits, labels: F.cross_entropy(logits.float(), labels)
    if kind == "liger":
        return liger.LigerCrossEntropyLoss()
    # no stream sync for the targets' check: a training loop's CPU runs ahead
    if kind == "atd":
        return lambda logits, labels: atd.cross_entropy(logits, labels, check_targets=False)
    if kind == "atd_inplace":
        return lambda logits, labels: atd.cross_entropy(logits, labels, inplace_backward=True,
                                                        check_targets=False)
    raise ValueError(kind)


@contextlib.contextmanager
def attention_softmax(modeling, softmax):
    """GPT-2's eager attention with its softmax swapped for softmax, the
    rest of it (its masking, scaling, dtype handling) the model's own:
    GPT2Attention looks modeling.eager_attention_forward up on every call,
    and that function calls torch.nn.functional.softmax once, so wrapping it
    and swapping that one name for the length of each call reroutes exactly
    the attention's softmax."""
    import torch
    original = modeling.eager_attention_forward

    def wrapped(*args, **kwargs):
        saved = torch.nn.functional.softmax
        torch.nn.functional.softmax = softmax
        try:
            return original(*args, **kwargs)
        finally:
            torch.nn.functional.softmax = saved

    modeling.eager_attention_forward = wrapped
    try:
        yield
    finally:
        modeling.eager_attention_forward = original


class CountingSoftmax:
    """atd.softmax as torch.nn.functional.softmax is called, counting its
    calls: the proof that the attention went through the library."""

    def __init__(self, atd):
        self.atd, self.calls = atd, 0

    def __call__(self, x, dim=None, _stacklevel=3, dtype=None):
        self.calls += 1
        return self.atd.softmax(x if dtype is None else x.to(dtype), dim=-1 if dim is None else dim)


def build_model(args):
    """GPT-2 of args' size, random weights from args.seed, dropout off (the
    variants' gradients comparable), eager attention, on the GPU."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    config = GPT2Config(n_layer=args.layers, n_embd=args.embd, n_head=args.heads,
                        vocab_size=args.vocab, n_positions=args.seq, resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=args.vocab - 1,
                        eos_token_id=args.vocab - 1)
    config._attn_implementation = "eager"
    torch.manual_seed(args.seed)
    model = GPT2LMHeadModel(config)
    model.config._attn_implementation = "eager"
    dtype = torch.float32 if args.autocast else torch.bfloat16
    return model.to("cuda", dtype=dtype).train()


def batch_of(args, batch):
    """Random tokens and their next-token labels (the last position -100:
    nothing follows it), seeded; the logits then need no shifted copy."""
    import torch
    g = torch.Generator(device="cpu").manual_seed(args.seed + 1)
    ids = torch.randint(0, args.vocab, (batch, args.seq), generator=g).to("cuda")
    labels = torch.full_like(ids, -100)
    labels[:, :-1] = ids[:, 1:]
    return ids, labels


def make_step(model, ids, labels, loss_fn, autocast):
    """One training step, forward and backward, grads set fresh: its loss."""
    import torch

    def step():
        model.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            logits = model(input_ids=ids, use_cache=False).logits
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
        loss.backward()
        return loss.detach()
    return step


def selected_grads(model, layers):
    """The compared parameters' gradients, as f32 copies."""
    named = dict(model.named_parameters())
    return {short: named[name.format(last=layers - 1)].grad.float().clone()
            for short, name in PARAMS.items()}


def compare(grads, ref):
    """(the largest absolute difference over the parameters, the relative L2
    error of each) of grads against ref."""
    max_abs = max((g - ref[k]).abs().max().item() for k, g in grads.items())
    rel = {k: ((g - ref[k]).norm() / ref[k].norm()).item() for k, g in grads.items()}
    return max_abs, rel


def time_step(step, warmup, reps):
    """(the median step in ms by CUDA events, the peak memory of the timed
    steps in MiB)."""
    import torch
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), torch.cuda.max_memory_allocated() / (1 << 20)


def run_variant(name, model, data, args, atd, liger, modeling):
    """One variant: its loss, its gradients, its step's time and memory
    (a dict), or raises."""
    kind, through_atd, _ = VARIANTS[name]
    step = make_step(model, *data, loss_function(kind, atd, liger), args.autocast)
    softmax = CountingSoftmax(atd) if through_atd else None
    with attention_softmax(modeling, softmax) if softmax else contextlib.nullcontext():
        loss = step().item()
        if softmax and softmax.calls != args.layers:
            raise RuntimeError(f"the attention's softmax went through atd.softmax {softmax.calls} "
                               f"times in a step, not {args.layers}: not routed")
        grads = selected_grads(model, args.layers)
        ms, peak = time_step(step, args.warmup, args.reps)
    model.zero_grad(set_to_none=True)
    return {"loss": loss, "grads": grads, "ms": ms, "peak": peak}


def row_of(name, result, ref, args, batch, gpu):
    """The CSV row of a variant: result a dict of run_variant's, or a status string."""
    row = {"variant": name, "batch": batch, "seq": args.seq, "layers": args.layers, "vocab": args.vocab,
           "dtype": "f32+autocast" if args.autocast else "bf16", "gpu": gpu, "what": VARIANTS[name][2]}
    if isinstance(result, str):
        return dict(row, status=result)
    row.update(status="ok", loss=f"{result['loss']:.6f}", step_ms=f"{result['ms']:.2f}",
               tokens_per_s=f"{batch * args.seq / result['ms'] * 1e3:.0f}", peak_mib=f"{result['peak']:.0f}")
    if ref is not None:
        max_abs, rel = compare(result["grads"], ref["grads"])
        row.update(loss_diff=f"{abs(result['loss'] - ref['loss']):.2e}", grad_max_abs=f"{max_abs:.2e}",
                   **{f"grad_rel_{k}": f"{v:.2e}" for k, v in rel.items()})
    return row


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)


def print_table(rows):
    cols = ["variant", "status", "loss", "loss_diff", "grad_max_abs"] + [f"grad_rel_{p}" for p in PARAMS] + \
        ["step_ms", "tokens_per_s", "peak_mib"]
    timed = [r for r in rows if r["status"] == "ok"]  # the others: a line of their own
    widths = {c: max([len(c)] + [len(str(r.get(c, ""))) for r in timed]) for c in cols}
    print("  ".join(c.ljust(widths[c]) for c in cols))
    for r in rows:
        if r["status"] != "ok":
            print(f"{r['variant'].ljust(widths['variant'])}  {r['status']}")
            continue
        print("  ".join(str(r.get(c, "")).ljust(widths[c]) for c in cols))


def fitting_batch(args, model):
    """The largest batch from --batch down, halving, whose torch step runs
    (the reference, and the largest of the variants' memory but
    torch_fp32's, by its f32 copy of the logits)."""
    import torch
    batch = args.batch
    while True:
        try:
            data = batch_of(args, batch)
            make_step(model, *data, loss_function("torch", None, None), args.autocast)()
            model.zero_grad(set_to_none=True)
            return batch, data
        except torch.cuda.OutOfMemoryError:
            model.zero_grad(set_to_none=True)
            torch.cuda.empty_cache()
            if batch == 1:
                raise
            batch //= 2
            print(f"train_step: out of memory, batch {batch} next", file=sys.stderr)


def main(argv=None):
    args = parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        sys.exit("train_step: needs a CUDA GPU")
    modeling = importlib.import_module("transformers.models.gpt2.modeling_gpt2")
    if not hasattr(modeling, "eager_attention_forward"):
        sys.exit("train_step: this transformers has no gpt2 eager_attention_forward to route")
    atd, liger = import_atd(args.db), import_liger()
    model = build_model(args)
    batch, data = fitting_batch(args, model)
    gpu = torch.cuda.get_device_name()
    rows, ref = [], None
    for name in args.variant_list:
        result = missing_reason(name, atd, liger)
        if result is None:
            try:
                result = run_variant(name, model, data, args, atd, liger, modeling)
            except Exception as exc:  # noqa: BLE001 (a variant that cannot run: said, the others go on)
                model.zero_grad(set_to_none=True)
                torch.cuda.empty_cache()
                result = "fails: " + (str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__)
        if name == "torch":
            if isinstance(result, str):
                sys.exit(f"train_step: the reference variant torch {result}")
            ref = result
        rows.append(row_of(name, result, ref if name != "torch" else None, args, batch, gpu))
        print(f"{name}: {rows[-1]['status']} {rows[-1].get('step_ms', '')}", file=sys.stderr, flush=True)
    print(f"GPT-2 {args.layers} layers, n_embd {args.embd}, vocab {args.vocab}, batch {batch} x seq "
          f"{args.seq}, {'f32 weights, bf16 autocast' if args.autocast else 'bf16 weights'}, {gpu}")
    print_table(rows)
    write_csv(args.csv, rows)
    return 0 if all(r["status"] == "ok" or r["status"].startswith("unavailable") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
