"""The backward ops on a GPU (atd.softmax_backward, atd.log_softmax_backward
and the autograd of atd.softmax and atd.log_softmax through them), against
references in float64 from the same y and dy: the three dtypes at row
lengths that reach each backward template and the built-in one, in place
over dy, strided views, another dim, the forward's extreme rows (masked,
NaN, huge logits) and extreme gradients, opcheck, torch.compile (forward
and backward) and a captured CUDA graph. Skipped as test_gpu.py is.

  PYTHONPATH=python python3 -m unittest discover -s python/tests -p 'test_gpu*.py' -v
"""
import unittest

try:
    import torch
except ImportError:
    torch = None

import autotune_dispatch as atd

import test_gpu  # as a module: its OnTheGpu imported by name would run here again
from test_gpu import DTYPES, HAVE_GPU, REQUIRED, TOLERANCE

# many short rows (warp), rows in registers (block), long rows (loop)
SHAPES = ((4096, 7), (4096, 33), (1031, 1000), (263, 4097), (27, 12289), (27, 70001), (5, 262147))


def reference(op, y, dy):
    """(dx, scale) in float64 from y and dy as the dtype holds them: scale
    bounds |dx| row by row (the terms before they cancel), so that the
    tolerance holds where dy - sum(dy y) cancels to nearly nothing."""
    yd, gd = y.double(), dy.double()
    if op == "softmax_backward":
        s = (gd * yd).sum(-1, keepdim=True)
        dx = yd * (gd - s)
        scale = (yd * gd).norm(dim=-1) + yd.norm(dim=-1) * s.abs().squeeze(-1)
    else:
        s = gd.sum(-1, keepdim=True)
        dx = gd - yd.exp() * s
        scale = gd.norm(dim=-1) + yd.exp().norm(dim=-1) * s.abs().squeeze(-1)
    return dx, scale


FORWARD = {"softmax_backward": "softmax", "log_softmax_backward": "log_softmax"}
OPS = tuple(FORWARD)


@unittest.skipUnless(HAVE_GPU or REQUIRED, "needs PyTorch with a CUDA GPU")
class BackwardOnTheGpu(unittest.TestCase):
    setUpClass = test_gpu.OnTheGpu.setUpClass
    data = test_gpu.OnTheGpu.data
    extreme_rows = test_gpu.OnTheGpu.extreme_rows

    def call(self, op, y, dy, **kw):
        return getattr(atd, op)(y, dy, **kw)

    def forward(self, op, x):
        return getattr(torch, FORWARD[op])(x.double(), dim=-1).to(x.dtype)

    def expect(self, op, dx, y, dy):
        """dx has the reference's NaNs where it has them and, row by row,
        its finite values within the dtype's tolerance of the row's scale."""
        ref, scale = reference(op, y, dy)
        what = f"{op} {y.dtype} {tuple(y.shape)}"
        self.assertEqual(dx.shape, y.shape)
        self.assertEqual(dx.dtype, y.dtype)
        dd = dx.double()
        self.assertTrue(torch.equal(torch.isnan(dd), torch.isnan(ref)),
                        f"{what}: NaN at rows "
                        f"{torch.nonzero((torch.isnan(dd) != torch.isnan(ref)).any(-1)).flatten()[:8].tolist()}")
        ok = ~torch.isnan(ref).any(-1)
        # past the dtype's range the reference rounds to inf, as dx does
        rounded = ref.to(y.dtype).double()
        inf = torch.isinf(rounded) | torch.isinf(dd)
        self.assertTrue(torch.equal(dd[inf & ok.unsqueeze(-1)], rounded[inf & ok.unsqueeze(-1)]),
                        f"{what}: infinities differ")
        diff = torch.where(inf, 0.0, dd - ref)[ok].norm(dim=-1)
        bound = TOLERANCE[str(y.dtype).replace("torch.", "")] * scale[ok] + 1e-300
        worst = (diff / bound).max().item() if ok.any() else 0.0
        self.assertLessEqual(worst, 1.0, f"{what}: row error {worst:.2f} of the tolerance")

    def test_the_three_dtypes_at_every_template(self):
        for op in OPS:
            for dt in DTYPES:
                for M, N in SHAPES:
                    with self.subTest(op=op, dtype=dt, M=M, N=N):
                        y = self.forward(op, self.data(M, N, dtype=dt))
                        dy = self.data(M, N, dtype=dt)
                        self.expect(op, self.call(op, y, dy), y, dy)

    def test_in_place_over_dy(self):
        for op in OPS:
            for dt in DTYPES:
                with self.subTest(op=op, dtype=dt):
                    y = self.forward(op, self.data(300, 3000, dtype=dt))
                    dy = self.data(300, 3000, dtype=dt)
                    keep = dy.clone()
                    self.assertIs(self.call(op, y, dy, out=dy), dy)
                    self.expect(op, dy, y, keep)

    def test_strided_views(self):
        for op in OPS:
            for dt in DTYPES:
                with self.subTest(op=op, dtype=dt):
                    ybuf = self.forward(op, self.data(256, 1536, dtype=dt))
                    gbuf = self.data(256, 2048, dtype=dt)
                    y, dy = ybuf[:, :1000], gbuf[:, 100:1100]  # rows 1536 and 2048 apart
                    self.expect(op, self.call(op, y, dy), y, dy)
                    keep, rest = dy.clone(), gbuf.clone()
                    self.call(op, y, dy, out=dy)  # in place into a view
                    self.expect(op, dy, y, keep)
                    self.assertTrue(torch.equal(gbuf[:, :100], rest[:, :100]))
                    self.assertTrue(torch.equal(gbuf[:, 1100:], rest[:, 1100:]))
                    # rows that need a copy: an expanded dy (sum's gradient), a transpose
                    ones = torch.ones(1, device="cuda", dtype=y.dtype).expand(256, 1000)
                    self.expect(op, self.call(op, y, ones), y, ones.contiguous())
                    yt = self.forward(op, self.data(40, 30, dtype=dt).t().contiguous()).t()
                    gt = self.data(30, 40, dtype=dt).t()
                    self.expect(op, self.call(op, yt, gt, dim=0).t(), yt.t(), gt.t())

    def test_extreme_rows_of_the_forward_and_extreme_gradients(self):
        for op in OPS:
            for dt in DTYPES:
                for M, N in ((4096, 33), (1031, 1000), (27, 12289), (13, 70001)):
                    with self.subTest(op=op, dtype=dt, M=M, N=N):
                        x = self.extreme_rows(M, N, dt)
                        for masked_zero in (False, True):
                            fwd = getattr(atd, FORWARD[op])
                            y = fwd(x, masked_zero=masked_zero)
                            dy = self.data(M, N, dtype=dt)
                            self.expect(op, self.call(op, y, dy), y, dy)
                        # as large as the sums in f32 allow (log_softmax's sum(dy)
                        # over N elements must not overflow)
                        big = min(torch.finfo(getattr(torch, dt)).max / 4, 1e36 / N)
                        dy = (self.data(M, N, dtype="float32") / 8 * big).to(getattr(torch, dt))
                        y = getattr(atd, FORWARD[op])(self.data(M, N, dtype=dt))
                        self.expect(op, self.call(op, y, dy), y, dy)

    def test_a_masked_row_gives_zero_or_dy(self):
        x = self.data(8, 100)
        x[3] = -float("inf")
        dy = self.data(8, 100)
        y = atd.softmax(x, masked_zero=True)
        self.assertTrue(torch.equal(atd.softmax_backward(y, dy)[3], torch.zeros(100, device="cuda")))
        lp = atd.log_softmax(x, masked_zero=True)
        self.assertTrue(torch.equal(atd.log_softmax_backward(lp, dy)[3], dy[3]))

    def test_autograd_goes_through_the_library(self):
        for op in OPS:
            fwd = getattr(atd, FORWARD[op])
            for dt in DTYPES:
                with self.subTest(op=op, dtype=dt):
                    x = self.data(64, 1000, dtype=dt).requires_grad_()
                    g = self.data(64, 1000, dtype=dt)
                    y = fwd(x)
                    y.backward(g)
                    self.expect(op, x.grad, y.detach(), g)
                    x2 = x.detach().double().requires_grad_()
                    getattr(torch, FORWARD[op])(x2, -1).backward(g.double())
                    err = ((x.grad.double() - x2.grad).norm() / x2.grad.norm()).item()
                    self.assertLessEqual(err, 10 * TOLERANCE[dt])
        # the backward of another dim, and a gradient shared by two consumers
        x = self.data(5, 300, 7).requires_grad_()
        (atd.softmax(x, dim=1) * 3.0).sum().backward()
        self.assertLessEqual(x.grad.abs().max().item(), 1e-5)
        a = self.data(16, 50).requires_grad_()
        (atd.softmax(a) + atd.log_softmax(a)).backward(torch.ones(16, 50, device="cuda"))
        a2 = a.detach().double().requires_grad_()
        (torch.softmax(a2, -1) + torch.log_softmax(a2, -1)).backward(torch.ones_like(a2))
        self.assertLessEqual(((a.grad.double() - a2.grad).norm() / a2.grad.norm()).item(), 1e-5)

    def test_no_pytorch_arithmetic_in_the_backward(self):
        """The backward is the library's kernel (an eager call launches it
        directly, with no custom op on the record), and no PyTorch op
        computes any part of it."""
        x = self.data(32, 500).requires_grad_()
        y = atd.softmax(x)
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as p:
            y.backward(torch.ones_like(y))
            torch.cuda.synchronize()
        names = {e.name for e in p.events()}
        self.assertIn("softmax_backward_kernel", names)
        for torch_op in ("aten::_softmax_backward_data", "aten::mul", "aten::sum", "aten::sub"):
            self.assertNotIn(torch_op, names)

    def test_bad_arguments(self):
        y, dy = self.data(16, 32), self.data(16, 32)
        for op in OPS:
            with self.subTest(op=op):
                with self.assertRaises(ValueError):
                    self.call(op, y.cpu(), dy.cpu())
                with self.assertRaises(TypeError):
                    self.call(op, y.double(), dy.double())
                with self.assertRaises(TypeError):
                    self.call(op, y, dy.half())
                with self.assertRaises(ValueError):
                    self.call(op, y, self.data(16, 31))
                with self.assertRaises(IndexError):
                    self.call(op, y, dy, dim=2)
                with self.assertRaises(ValueError):  # dy over y's memory, in place
                    self.call(op, y, y, out=y)

    def test_opcheck_torch_compile_and_a_cuda_graph(self):
        ops = torch.ops.autotune_dispatch
        y = atd.softmax(self.data(32, 700))
        dy = self.data(32, 700)
        if hasattr(torch.library, "opcheck"):
            for name in OPS:
                torch.library.opcheck(getattr(ops, name).default, (y, dy))
                torch.library.opcheck(getattr(ops, name + "_").default, (y, dy.clone()))
        for op in OPS:
            fwd = getattr(atd, FORWARD[op])
            # the backward graph AOTAutograd traces holds the library's backward op
            f = torch.compile(lambda t, fwd=fwd: fwd(t * 2.0) * 4.0, fullgraph=True)
            for dt in DTYPES:
                with self.subTest(op=op, dtype=dt):
                    x = self.data(256, 3000, dtype=dt).requires_grad_()
                    g = self.data(256, 3000, dtype=dt)
                    f(x).backward(g)
                    x2 = x.detach().double().requires_grad_()
                    (getattr(torch, FORWARD[op])(x2 * 2.0, -1) * 4.0).backward(g.double())
                    err = ((x.grad.double() - x2.grad).norm() / x2.grad.norm()).item()
                    self.assertLessEqual(err, 10 * TOLERANCE[dt])
        y = atd.softmax(self.data(4096, 2048))
        dy = self.data(4096, 2048)
        atd.softmax_backward(y, dy)  # chosen and loaded outside the capture
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            dx = atd.softmax_backward(y, dy)
        dy.copy_(self.data(4096, 2048))
        g.replay()
        torch.cuda.synchronize()
        self.expect("softmax_backward", dx, y, dy)


if __name__ == "__main__":
    unittest.main()
