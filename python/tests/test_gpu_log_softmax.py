"""autotune_dispatch.log_softmax on a GPU, against torch.log_softmax in
float64 (rounded to the dtype, so that a value past its range is -inf): the three
dtypes at row lengths that reach every template, the numerics contract's
extreme rows with and without masked_zero, rows of one element, another
dim, the backward, opcheck and torch.compile. Skipped as test_gpu.py is.

  PYTHONPATH=python python3 -m unittest discover -s python/tests -p 'test_gpu*.py' -v
"""
import unittest

try:
    import torch
except ImportError:
    torch = None

import autotune_dispatch as atd

from test_gpu import DTYPES, HAVE_GPU, REQUIRED, TOLERANCE, OnTheGpu


@unittest.skipUnless(HAVE_GPU or REQUIRED, "needs PyTorch with a CUDA GPU")
class LogSoftmaxOnTheGpu(unittest.TestCase):
    setUpClass = OnTheGpu.setUpClass
    data = OnTheGpu.data
    extreme_rows = OnTheGpu.extreme_rows

    def reference(self, x, masked_zero=False, dim=-1):
        ref = torch.log_softmax(x.double(), dim=dim)
        if masked_zero:
            ref[(x == -float("inf")).all(dim)] = -float("inf")
        # as the dtype holds it: rounded to it, so that a value past its
        # range (beyond half an ulp above its largest) is -inf
        return ref.to(x.dtype).double()

    def expect_as_torch(self, y, x, masked_zero=False, dim=-1):
        """y has the reference's NaNs and infinities where it has them and,
        row by row, its finite values within the dtype's tolerance."""
        ref = self.reference(x, masked_zero, dim)
        self.assertEqual(y.shape, x.shape)
        self.assertEqual(y.dtype, x.dtype)
        yd = y.double()
        self.assertTrue(torch.equal(torch.isnan(yd), torch.isnan(ref)),
                        f"{x.dtype} {tuple(x.shape)}: NaN where torch has none, or none where it has")
        inf = torch.isinf(ref) | torch.isinf(yd)
        self.assertTrue(torch.equal(yd[inf], ref[inf]), f"{x.dtype} {tuple(x.shape)}: infinities differ")
        ok = ~torch.isnan(ref) & ~inf
        d = torch.where(ok, yd - ref, 0.0).norm(dim=-1)
        n = torch.where(ok, ref, 0.0).norm(dim=-1)
        worst = (d / n.clamp_min(1e-300)).max().item()
        tol = TOLERANCE[str(x.dtype).replace("torch.", "")]
        self.assertLessEqual(worst, tol, f"{x.dtype} {tuple(x.shape)}: row error {worst:.2e}")

    def test_the_three_dtypes_at_every_template(self):
        for dt in DTYPES:
            for M, N in ((4096, 7), (4096, 33), (1031, 1000), (263, 4097), (27, 12289),
                         (27, 70001), (13, 262147), (12, 1048576), (64, 32000), (8, 128256)):
                with self.subTest(dtype=dt, M=M, N=N):
                    x = self.data(M, N, dtype=dt)
                    self.expect_as_torch(atd.log_softmax(x), x)

    def test_extreme_values_as_torch(self):
        for dt in DTYPES:
            for M, N in ((4096, 33), (1031, 1000), (27, 12289), (27, 70001), (13, 262147)):
                with self.subTest(dtype=dt, M=M, N=N):
                    x = self.extreme_rows(M, N, dt)
                    self.expect_as_torch(atd.log_softmax(x), x)
                    self.expect_as_torch(atd.log_softmax(x, masked_zero=True), x, masked_zero=True)

    def test_huge_logits_keep_their_offsets(self):
        # (x - max) first: offsets of 0.5 near 1e4 survive in f32
        x = torch.full((64, 1000), 1e4, device="cuda")
        x[:, 1::2] -= 0.5
        self.expect_as_torch(atd.log_softmax(x), x)

    def test_rows_of_one_element(self):
        # 4099: 16 bytes of rows a thread (softmax_tiny) and a tail of rows
        # one by one; a column of a wider tensor (row stride 3) and one off
        # the 16-byte boundary take the one-by-one path throughout
        for dt in DTYPES:
            for M in (300, 4099):
                with self.subTest(dtype=dt, M=M):
                    x = self.data(M, 1, dtype=dt)
                    x[3], x[4], x[5] = float("inf"), -float("inf"), float("nan")
                    x[M - 1] = float("nan")
                    y = atd.log_softmax(x)
                    self.expect_as_torch(y, x)
                    self.assertEqual(y[0].item(), 0.0)
                    self.expect_as_torch(atd.log_softmax(x, masked_zero=True), x, masked_zero=True)
                    wide = self.data(M, 3, dtype=dt)
                    wide[:, :1] = x
                    self.expect_as_torch(atd.log_softmax(wide[:, :1]), x)
                    off = self.data(M + 1, 1, dtype=dt)
                    off[1:] = x
                    atd.log_softmax(off[1:], out=off[1:])  # in place, off the boundary
                    self.expect_as_torch(off[1:], x)

    def test_out_and_in_place(self):
        for dt in DTYPES:
            with self.subTest(dtype=dt):
                x = self.data(300, 1000, dtype=dt)
                out = torch.empty_like(x)
                self.assertIs(atd.log_softmax(x, out=out), out)
                self.expect_as_torch(out, x)
                y = x.clone()
                atd.log_softmax(y, out=y)
                self.expect_as_torch(y, x)
                wide = self.data(300, 1500, dtype=dt)
                wide[:, :1000] = x
                atd.log_softmax(wide[:, :1000], out=wide[:, :1000])  # strided, in place
                self.expect_as_torch(wide[:, :1000], x)

    def test_another_dim(self):
        x = self.data(3, 500, 7)
        self.expect_as_torch(atd.log_softmax(x, dim=1), x, dim=1)

    def test_backward(self):
        x = self.data(64, 1000).requires_grad_()
        g = torch.rand(64, 1000, device="cuda")
        atd.log_softmax(x).backward(g)
        x2 = x.detach().double().requires_grad_()
        torch.log_softmax(x2, -1).backward(g.double())
        err = ((x.grad.double() - x2.grad).norm() / x2.grad.norm()).item()
        self.assertLessEqual(err, 1e-5)

    def test_opcheck_and_torch_compile(self):
        if hasattr(torch.library, "opcheck"):
            x = self.data(32, 700)
            torch.library.opcheck(torch.ops.autotune_dispatch.log_softmax.default, (x,))
            torch.library.opcheck(torch.ops.autotune_dispatch.log_softmax_out.default,
                                  (x, torch.empty_like(x)))
            torch.library.opcheck(torch.ops.autotune_dispatch.log_softmax_.default, (x.clone(),))
        f = torch.compile(lambda t: atd.log_softmax(t * 2.0) * 4.0, fullgraph=True)
        for dt in DTYPES:
            with self.subTest(dtype=dt):
                x = self.data(1024, 3000, dtype=dt)
                self.expect_as_torch(f(x) / 4.0, x * 2.0)


if __name__ == "__main__":
    unittest.main()
