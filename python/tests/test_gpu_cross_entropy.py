"""atd.cross_entropy on a GPU against torch.nn.functional.cross_entropy in
float64 from the same logits (docs/cross-entropy.md is the contract): every
option (ignore_index, label_smoothing, the three reductions, int64 and int32
targets), z_loss and softcap against their explicit formulas, the gradient
(in place too, and scaled by a grad_output that is not 1), extreme logits,
an out-of-range target raising TargetError, torch.compile and a captured
CUDA graph. Skipped as test_gpu.py is.

  PYTHONPATH=python python3 -m unittest discover -s python/tests -p 'test_gpu*.py' -v
"""
import unittest

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None

import autotune_dispatch as atd

import test_gpu  # as a module: its OnTheGpu imported by name would run here again
from test_gpu import DTYPES, HAVE_GPU, REQUIRED, TOLERANCE

# rows in registers, in shared memory, looped; vocabularies of real models;
# GPT-2's odd 50257 over a cluster (cross_entropy_regs at 64 rows in the H200
# library: each CTA's slice misaligned, its head and tail peeled)
SHAPES = ((512, 1000), (64, 32000), (8, 128256), (3, 7), (64, 50257))
LOSS_TOL = 1e-5  # the loss is float32 arithmetic from the dtype's logits


def reference(x, t, ignore_index=-100, label_smoothing=0.0, reduction="mean", z_loss=0.0,
              softcap=None):
    """(loss, lse) in float64 from the logits as the dtype holds them:
    torch's cross_entropy of the (soft-capped) logits plus z_loss * lse^2
    on the rows that count."""
    shape = t.shape  # classes last (torch's cross_entropy takes them at dim 1)
    z = x.double().reshape(-1, x.shape[-1])
    if softcap:
        z = softcap * torch.tanh(z / softcap)
    lse = torch.logsumexp(z, -1)
    t = t.long().reshape(-1)
    loss = F.cross_entropy(z, t, ignore_index=ignore_index, label_smoothing=label_smoothing,
                           reduction="none")
    valid = t != ignore_index
    loss = loss + torch.where(valid, z_loss * lse * lse, 0.0)
    if reduction == "sum":
        return loss.sum(), lse.reshape(shape)
    if reduction == "mean":
        return loss.sum() / valid.sum(), lse.reshape(shape)
    return loss.reshape(shape), lse.reshape(shape)


@unittest.skipUnless(HAVE_GPU or REQUIRED, "needs PyTorch with a CUDA GPU")
class CrossEntropyOnTheGpu(unittest.TestCase):
    setUpClass = test_gpu.OnTheGpu.setUpClass
    data = test_gpu.OnTheGpu.data

    def targets(self, M, V, dtype=torch.int64 if torch else None, ignored=0.1, ignore_index=-100):
        t = torch.randint(0, V, (M,), device="cuda", dtype=dtype)
        t[torch.rand(M, device="cuda") < ignored] = ignore_index
        t[0] = 1 if ignore_index != 1 else 2  # at least one row counts (a mean over none is NaN)
        return t

    def close(self, got, want, tol, what):
        got, want = got.double(), want.double()
        self.assertTrue(torch.equal(torch.isnan(got), torch.isnan(want)), f"{what}: NaN differs")
        ok = ~torch.isnan(want)
        err = ((got[ok] - want[ok]).norm() / want[ok].norm().clamp_min(1e-300)).item()
        self.assertLessEqual(err, tol, f"{what}: relative error {err:.2e}")

    def check(self, x, t, **kw):
        """loss, lse and the gradient of atd's against the reference's."""
        what = f"{x.dtype} {tuple(x.shape)} {t.dtype} {kw}"
        xa = x.clone().requires_grad_()
        loss, lse = atd.cross_entropy_lse(xa, t, **{k: v for k, v in kw.items() if k != "reduction"})
        reduction = kw.get("reduction", "mean")
        loss = atd.cross_entropy(xa, t, **kw)
        x64 = x.double().requires_grad_()
        want, want_lse = reference(x64, t, **kw)
        self.assertEqual(loss.dtype, torch.float32)
        self.close(loss.detach(), want.detach(), LOSS_TOL, what + " loss")
        self.close(lse, want_lse.detach(), LOSS_TOL, what + " lse")
        g = torch.rand_like(want) if reduction == "none" else torch.tensor(1.0, device="cuda")
        loss.backward(g.float())
        want.backward(g.double())
        self.close(xa.grad, x64.grad, TOLERANCE[str(x.dtype).replace("torch.", "")], what + " grad")

    def test_every_option_against_torch(self):
        for dt in DTYPES:
            for M, V in SHAPES:
                x = self.data(M, V, dtype=dt)
                for tdt in (torch.int64, torch.int32):
                    t = self.targets(M, V, tdt)
                    for reduction in ("mean", "sum", "none"):
                        for ls in (0.0, 0.1):
                            with self.subTest(dtype=dt, M=M, V=V, target=tdt, reduction=reduction,
                                              label_smoothing=ls):
                                self.check(x, t, reduction=reduction, label_smoothing=ls)
                t = self.targets(M, V, ignore_index=7)
                with self.subTest(dtype=dt, M=M, V=V, ignore_index=7):
                    self.check(x, t, ignore_index=7)

    def test_z_loss_and_softcap_against_their_formulas(self):
        for dt in DTYPES:
            for M, V in SHAPES[:3]:
                x = self.data(M, V, dtype=dt) * 4
                t = self.targets(M, V)
                for kw in ({"z_loss": 1e-4}, {"softcap": 30.0}, {"softcap": 5.0, "z_loss": 1e-3,
                           "label_smoothing": 0.05, "reduction": "sum"}):
                    with self.subTest(dtype=dt, M=M, V=V, **kw):
                        self.check(x, t, **kw)

    def test_the_gradient_in_place_and_scaled(self):
        for dt in DTYPES:
            with self.subTest(dtype=dt):
                x = self.data(256, 32000, dtype=dt)
                t = self.targets(256, 32000)
                leaf = x.clone().requires_grad_()
                logits = leaf * 1.0  # not a leaf: its memory may take the gradient
                keep = logits.detach().clone()
                loss = atd.cross_entropy(logits, t, inplace_backward=True)
                (loss * 2.5).backward()
                x64 = keep.double().requires_grad_()
                (reference(x64, t)[0] * 2.5).backward()
                tol = TOLERANCE[dt]
                self.close(leaf.grad, x64.grad, tol, f"{dt} in place, scaled")
                # scaled in place (as Liger's): the logits' memory holds the gradient returned
                self.close(logits.detach(), x64.grad, tol, f"{dt}: the logits hold the gradient")

    def test_extreme_logits(self):
        for dt in DTYPES:
            info = torch.finfo(getattr(torch, dt))
            with self.subTest(dtype=dt):
                M, V = 8, 5000
                x = self.data(M, V, dtype=dt).double()
                x[0] = x[0] / 8 * (info.max / 4)      # huge, the loss still finite
                x[1] += 1e4                            # offsets near a large max
                x[2, ::3] = -float("inf")              # some masked
                x[3] = -float("inf")                   # all masked: NaN
                x[4, 10] = float("inf")                # NaN
                x[5, 11] = float("nan")                # NaN
                x[6] = -x[0]
                x = x.to(getattr(torch, dt))
                t = self.targets(M, V, ignored=0.0)
                t[2] = 1  # a target that is not masked
                loss, lse = atd.cross_entropy_lse(x, t)
                want, want_lse = reference(x, t, reduction="none")
                self.assertTrue(torch.isnan(loss[[3, 4, 5]]).all().item(), loss)
                self.assertTrue(torch.isfinite(loss[[0, 1, 2, 6, 7]]).all().item(), loss)
                keep = [0, 1, 2, 6, 7]
                self.close(loss[keep], want[keep], 1e-5, f"{dt} extreme loss")
                self.close(lse[keep], want_lse[keep], 1e-5, f"{dt} extreme lse")

    def test_an_out_of_range_target_raises(self):
        x = self.data(64, 1000)
        for bad in (1000, -5, 10**12):
            t = self.targets(64, 1000)
            t[17] = bad
            with self.subTest(target=bad):
                with self.assertRaises(atd.TargetError) as c:
                    atd.cross_entropy(x, t)
                self.assertIn(f"target[17] = {bad}", str(c.exception))
        t = self.targets(64, 1000, dtype=torch.int32, ignored=0.0)
        t[3] = -1
        with self.assertRaises(atd.TargetError):
            atd.cross_entropy(x, t, reduction="none")
        # ignore_index itself is not out of range, whatever its value
        t[3] = -1
        self.assertTrue(torch.isfinite(atd.cross_entropy(x, t, ignore_index=-1)).item())

    def test_the_backward_scale_reads_the_factor_on_the_gpu(self):
        ops = torch.ops.autotune_dispatch
        for dt in DTYPES:
            with self.subTest(dtype=dt):
                g0 = self.data(64, 3000, dtype=dt)
                g = g0.clone()
                ops.cross_entropy_scale_(g, torch.ones((), device="cuda"), False)
                self.assertTrue(torch.equal(g, g0), "a factor of 1 leaves it alone")
                ops.cross_entropy_scale_(g, torch.full((), 0.5, device="cuda"), False)
                self.close(g, g0.double() * 0.5, TOLERANCE[dt], "halved")
                rows = torch.ones(64, device="cuda")
                rows[5], rows[9] = 3.0, -2.0
                g = g0.clone()
                ops.cross_entropy_scale_(g, rows, True)
                self.close(g, g0.double() * rows.double()[:, None], TOLERANCE[dt], "per row")
                keep = torch.ones(64, dtype=torch.bool, device="cuda")
                keep[[5, 9]] = False
                self.assertTrue(torch.equal(g[keep], g0[keep]), "rows of 1 untouched")

    def test_the_backward_scale_at_any_alignment(self):
        # rows starting anywhere in a 16-byte word (odd lengths, a column
        # offset, a row stride), shorter than a word, and longer than a
        # CTA's pass: each element scaled once, the row's neighbours untouched
        ops = torch.ops.autotune_dispatch
        for dt in DTYPES:
            for M, V, skip in ((3, 1, 0), (5, 7, 1), (64, 3001, 3), (200, 50257, 1), (2, 70001, 5)):
                with self.subTest(dtype=dt, M=M, V=V, skip=skip):
                    whole0 = self.data(M, V + skip + 2, dtype=dt)
                    whole = whole0.clone()
                    g = whole[:, skip:skip + V]
                    # a power of two: exact in every dtype, so compared bit for bit
                    ops.cross_entropy_scale_(g, torch.full((), -4.0, device="cuda"), False)
                    want = whole0.clone()
                    want[:, skip:skip + V] *= -4.0
                    self.assertTrue(torch.equal(whole, want), "each element scaled once, "
                                    "the rows' neighbours untouched")

    def test_unchecked_targets_give_nan_rows_not_an_error(self):
        x = self.data(64, 1000)
        t = self.targets(64, 1000, ignored=0.0)
        t[17] = 1000
        loss = atd.cross_entropy(x, t, reduction="none", check_targets=False)
        self.assertTrue(torch.isnan(loss[17]).item(), loss[17])
        keep = torch.arange(64, device=x.device) != 17
        self.assertTrue(torch.isfinite(loss[keep]).all().item())
        want = F.cross_entropy(x.double()[keep], t[keep], reduction="none")
        self.close(loss[keep], want, 1e-5, "the other rows")

    def test_bad_arguments(self):
        x, t = self.data(16, 32), self.targets(16, 32)
        with self.assertRaises(ValueError):
            atd.cross_entropy(x, t, reduction="avg")
        with self.assertRaises(ValueError):
            atd.cross_entropy(x, t, label_smoothing=1.5)
        with self.assertRaises(ValueError):
            atd.cross_entropy(x, t, z_loss=-1.0)
        with self.assertRaises(TypeError):
            atd.cross_entropy(x, t.float())
        with self.assertRaises(ValueError):
            atd.cross_entropy(x.cpu(), t.cpu())
        with self.assertRaises(ValueError):
            atd.cross_entropy(x, t[:8])

    def test_empty_and_strided(self):
        e = torch.empty(0, 100, device="cuda")
        te = torch.empty(0, dtype=torch.long, device="cuda")
        self.assertTrue(torch.isnan(atd.cross_entropy(e, te)).item())
        self.assertEqual(atd.cross_entropy(e, te, reduction="sum").item(), 0.0)
        # rows 1200 apart, read where they are; the gradient lands in the view
        leaf = self.data(128, 1200, dtype="bfloat16").requires_grad_()
        t = self.targets(128, 1000)
        atd.cross_entropy(leaf[:, 100:1100], t).backward()
        x64 = leaf.detach()[:, 100:1100].double().requires_grad_()
        reference(x64, t)[0].backward()
        self.close(leaf.grad[:, 100:1100], x64.grad, TOLERANCE["bfloat16"], "strided")
        self.assertEqual(leaf.grad[:, :100].abs().max().item(), 0.0)
        self.assertEqual(leaf.grad[:, 1100:].abs().max().item(), 0.0)
        self.check(self.data(4, 6, 500), self.targets(24, 500).reshape(4, 6), reduction="none")
        self.check(self.data(4, 6, 500), self.targets(24, 500).reshape(4, 6))

    def test_opcheck_torch_compile_and_a_cuda_graph(self):
        x, t = self.data(64, 3000), self.targets(64, 3000)
        ops = torch.ops.autotune_dispatch
        if hasattr(torch.library, "opcheck"):
            torch.library.opcheck(ops.cross_entropy.default,
                                  (x, t, -100, 0.1, 1e-4, 0.0, "mean", True, True))
            torch.library.opcheck(ops.cross_entropy.default,
                                  (x, t, -100, 0.0, 0.0, 30.0, "none", False, False))
            torch.library.opcheck(ops.cross_entropy_.default,
                                  (x.clone(), t, -100, 0.0, 0.0, 0.0, "sum", True))
            torch.library.opcheck(ops.cross_entropy_scale_.default,
                                  (x.clone(), torch.full((), 0.5, device="cuda"), False))
            torch.library.opcheck(ops.cross_entropy_scale_.default,
                                  (x.clone(), torch.rand(64, device="cuda"), True))
        f = torch.compile(lambda a, b: atd.cross_entropy(a * 2.0, b, label_smoothing=0.1))
        for dt in DTYPES:
            with self.subTest(dtype=dt):
                xa = self.data(256, 5000, dtype=dt).requires_grad_()
                tt = self.targets(256, 5000)
                f(xa, tt).backward()
                x64 = xa.detach().double().requires_grad_()
                reference(x64 * 2.0, tt, label_smoothing=0.1)[0].backward()
                self.close(xa.grad, x64.grad, TOLERANCE[dt], f"{dt} compiled")
        x, t = self.data(4096, 32000, dtype="bfloat16"), self.targets(4096, 32000)
        atd.cross_entropy(x, t)  # chosen and loaded outside the capture
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            loss = atd.cross_entropy(x, t)
        x.copy_(self.data(4096, 32000, dtype="bfloat16"))
        g.replay()
        torch.cuda.synchronize()
        self.close(loss, reference(x, t)[0], LOSS_TOL, "captured")
        # captured, an out-of-range target cannot be checked: its row is NaN
        t[5] = 32000
        g.replay()
        torch.cuda.synchronize()
        self.assertTrue(torch.isnan(loss).item())

    def test_eager_calls_launch_directly_and_traced_ones_go_through_the_ops(self):
        """Eager: no custom op on the profiler's record (its Python layers
        cost the host more than the launches); under a dispatch mode (what
        make_fx and fake tensors trace with) the ops carry the call. Both
        the same loss and gradient."""
        from torch.profiler import ProfilerActivity, profile

        x, t = self.data(64, 3000), self.targets(64, 3000)
        grads, losses = [], []
        for traced in (False, True):
            xa = x.clone().requires_grad_()
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                if traced:
                    seen, loss = test_gpu.traced(
                        lambda: atd.cross_entropy(xa, t, label_smoothing=0.1))
                else:
                    loss = atd.cross_entropy(xa, t, label_smoothing=0.1)
                loss.backward()
            names = {e.name for e in prof.events()}
            ce_ops = {n for n in names if n.startswith("autotune_dispatch::")}
            if traced:
                self.assertIn("autotune_dispatch.cross_entropy", seen)
                self.assertIn("autotune_dispatch::cross_entropy", ce_ops)
            else:
                self.assertEqual(ce_ops, set(), "an eager call went through the custom ops")
            losses.append(loss.detach())
            grads.append(xa.grad)
        self.assertTrue(torch.equal(losses[0], losses[1]))
        self.assertTrue(torch.equal(grads[0], grads[1]))


if __name__ == "__main__":
    unittest.main()
