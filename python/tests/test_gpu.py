"""The package on a GPU, against torch.softmax in float64: the three
dtypes, batch dimensions with strides, in place and out=, another dim, the
backward, inside torch.compile (fullgraph) and a captured CUDA graph, from
a thread that had not touched CUDA. Skipped without PyTorch and a CUDA GPU,
unless ATD_REQUIRE_GPU=1 (make python-gpu-test), which makes that a
failure. The database is the default handle's: $AUTOTUNE_DB, else
autotune.db, else the library's seed winners.

  PYTHONPATH=python python3 -m unittest discover -s python/tests -p 'test_gpu*.py' -v
"""
import os
import threading
import unittest

try:
    import torch
except ImportError:
    torch = None

import autotune_dispatch as atd

HAVE_GPU = torch is not None and torch.cuda.is_available()
REQUIRED = os.environ.get("ATD_REQUIRE_GPU") == "1"
TOLERANCE = {"float32": 1e-5, "float16": 1e-2, "bfloat16": 1e-2}
DTYPES = ("float32", "float16", "bfloat16")


def rel_err(y, ref):
    return ((y.double() - ref).norm() / ref.norm()).item()


def traced(fn):
    """fn() under a dispatch mode (what make_fx and fake tensors trace
    with): (the op packets it saw, fn's result)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Seen(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.add(str(func.overloadpacket))
            return func(*args, **(kwargs or {}))

    seen = Seen()
    with seen:
        result = fn()
    return seen.ops, result


@unittest.skipUnless(HAVE_GPU or REQUIRED, "needs PyTorch with a CUDA GPU")
class OnTheGpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not HAVE_GPU:
            raise AssertionError("ATD_REQUIRE_GPU=1 but PyTorch with a CUDA GPU is missing")
        torch.manual_seed(1)

    def data(self, *shape, dtype="float32"):
        return (torch.rand(*shape, device="cuda") * 16 - 8).to(getattr(torch, dtype))

    def expect(self, y, x, dim=-1):
        """y is softmax(x, dim) within the dtype's tolerance, with no NaN."""
        ref = torch.softmax(x.double(), dim=dim)
        self.assertEqual(y.shape, x.shape)
        self.assertEqual(y.dtype, x.dtype)
        self.assertFalse(torch.isnan(y).any().item())
        err = rel_err(y, ref)
        self.assertLessEqual(err, TOLERANCE[str(x.dtype).replace("torch.", "")],
                             f"{x.dtype} {tuple(x.shape)}: relative error {err:.2e}")

    def test_the_three_dtypes_at_several_shapes(self):
        for dt in DTYPES:
            for shape in ((4096, 1000), (8, 12672), (3, 7, 2500), (1, 1), (5,), (33, 4097)):
                with self.subTest(dtype=dt, shape=shape):
                    x = self.data(*shape, dtype=dt)
                    self.expect(atd.softmax(x), x)

    def extreme_rows(self, M, N, dtype):
        """M rows of N elements cycling through the numerics contract's
        kinds (tuner/check/extreme_rows.h): huge, a spike, +-max, all max,
        huge negative, offsets of +-1e4, subnormals, a mask, all -inf, a
        +inf, a NaN."""
        dt = getattr(torch, dtype)
        info = torch.finfo(dt)
        big, tiny = info.max, info.smallest_normal * 2.0 ** -3
        u = torch.rand(M, N, device="cuda", dtype=torch.float64) * 16 - 8
        x = u.clone()
        col = torch.arange(N, device="cuda")
        kinds = [
            u / 8 * big, torch.where(col == N // 3, big, u), torch.where(col == N - 1, big, -big).expand(M, N),
            torch.full_like(u, big), -big / 2 - u.abs() / 16 * big, u + 1e4, u - 1e4,
            tiny * (1 + (u.abs() * 2).floor()), torch.where(col % 3 == 1, -float("inf"), u),
            torch.full_like(u, -float("inf")), torch.where(col == 0, float("inf"), u),
            torch.where(col == N // 2, float("nan"), u),
        ]
        for r in range(M):
            x[r] = kinds[r % len(kinds)][r]
        return x.to(dt)

    def expect_as_torch(self, y, x, masked_zero=False):
        """y has torch.softmax(x)'s NaN pattern and, row by row, its values
        within the dtype's tolerance (rows of all -inf zeros with
        masked_zero)."""
        ref = torch.softmax(x.double(), dim=-1)
        if masked_zero:
            ref[(x == -float("inf")).all(-1)] = 0
        tol = TOLERANCE[str(x.dtype).replace("torch.", "")]
        self.assertTrue(torch.equal(torch.isnan(y), torch.isnan(ref)),
                        f"{x.dtype} {tuple(x.shape)}: NaN at rows "
                        f"{torch.nonzero((torch.isnan(y) != torch.isnan(ref)).any(-1)).flatten()[:8].tolist()}")
        finite = ~torch.isnan(ref).any(-1)
        d = (y.double()[finite] - ref[finite]).norm(dim=-1)
        n = ref[finite].norm(dim=-1)
        zero = n == 0  # masked rows: exactly zeros
        self.assertEqual(d[zero].abs().max().item() if zero.any() else 0.0, 0.0)
        worst = (d[~zero] / n[~zero]).max().item() if (~zero).any() else 0.0
        self.assertLessEqual(worst, tol, f"{x.dtype} {tuple(x.shape)}: row error {worst:.2e}")

    def test_extreme_values_as_torch_at_every_template(self):
        # row lengths that reach each template: many short rows (tile,
        # warp), rows in registers (block), in shared memory, over a
        # cluster, split over CTAs
        for dt in DTYPES:
            for M, N in ((4099, 1), (4096, 7), (4096, 33), (1031, 1000), (263, 4097),
                         (27, 12289), (27, 70001), (13, 262147), (12, 1048576)):
                with self.subTest(dtype=dt, M=M, N=N):
                    x = self.extreme_rows(M, N, dt)
                    self.expect_as_torch(atd.softmax(x), x)
                    self.expect_as_torch(atd.softmax(x, masked_zero=True), x, masked_zero=True)

    def test_rows_of_one_element_strided_and_in_place(self):
        # a column of a wider tensor (row stride 3) and a column off the
        # 16-byte boundary, in place: softmax_tiny's one-by-one path
        for dt in DTYPES:
            with self.subTest(dtype=dt):
                x = self.extreme_rows(4099, 1, dt)
                wide = self.data(4099, 3, dtype=dt)
                wide[:, :1] = x
                self.expect_as_torch(atd.softmax(wide[:, :1]), x)
                off = self.data(4100, 1, dtype=dt)
                off[1:] = x
                atd.softmax(off[1:], out=off[1:])
                self.expect_as_torch(off[1:], x)

    def test_huge_logits_give_a_distribution(self):
        # the report: randn * 2.5e29 gave NaN in half the rows, and one
        # 1e30 in an ordinary row turned it NaN
        x = torch.randn(4096, 1000, device="cuda") * 2.5e29
        x[7, 100] = 1e30
        y = atd.softmax(x)
        self.assertFalse(torch.isnan(y).any().item())
        self.expect_as_torch(y, x)
        self.assertEqual(y[7, 100].item(), 1.0)

    def test_rows_of_one_element(self):
        # their own path in the kernels: 1, NaN for +-inf and NaN, 0 for a
        # masked -inf with masked_zero; strided and in place too
        for dt in DTYPES:
            with self.subTest(dtype=dt):
                x = self.data(300, 1, dtype=dt)
                x[3], x[4], x[5], x[6] = float("inf"), -float("inf"), float("nan"), 3e4
                self.expect_as_torch(atd.softmax(x), x)
                self.expect_as_torch(atd.softmax(x, masked_zero=True), x, masked_zero=True)
                wide = self.data(300, 5, dtype=dt)
                wide[:, :1] = x
                self.expect_as_torch(atd.softmax(wide[:, :1]), x)
                y = x.clone()
                atd.softmax(y, out=y)
                self.expect_as_torch(y, x)

    def test_masked_zero_under_torch_compile(self):
        x = self.data(64, 1000)
        x[3] = -float("inf")
        f = torch.compile(lambda t: atd.softmax(t, masked_zero=True), fullgraph=True)
        y = f(x)
        self.assertTrue(torch.equal(y[3], torch.zeros_like(y[3])))
        self.expect_as_torch(y, x, masked_zero=True)

    def test_a_scalar_and_an_empty_tensor(self):
        x = torch.tensor(3.0, device="cuda")
        self.assertEqual(atd.softmax(x).item(), 1.0)
        e = torch.empty(0, 5, device="cuda")
        self.assertEqual(atd.softmax(e).shape, (0, 5))

    def test_batch_strides(self):
        for dt in DTYPES:
            base = self.data(6, 10, 700, dtype=dt)
            views = {"row stride": base[0, :, :500], "every other batch": base[::2],
                     "rows that do not collapse": base[:, :4], "one step": base[:, ::3, 100:600],
                     "last dim not contiguous": base[:, :, :300].transpose(1, 2),
                     "broadcast rows": base[0, 0].expand(9, 700)}
            for name, x in views.items():
                with self.subTest(dtype=dt, view=name):
                    self.expect(atd.softmax(x), x)

    def test_another_dim(self):
        x = self.data(64, 300, 5)
        for dim in (0, 1, -2):
            with self.subTest(dim=dim):
                self.expect(atd.softmax(x, dim=dim), x, dim=dim)

    def test_in_place(self):
        for dt in DTYPES:
            with self.subTest(dtype=dt):
                x = self.data(512, 3000, dtype=dt)
                before = x.clone()
                y = atd.softmax(x, out=x)
                self.assertIs(y, x)
                self.expect(x, before)

    def test_in_place_on_a_view_leaves_the_rest(self):
        buf = self.data(300, 1024)
        keep = buf.clone()
        view = buf[:, 100:900]
        atd.softmax(view, out=view)
        self.expect(view, keep[:, 100:900])
        self.assertTrue(torch.equal(buf[:, :100], keep[:, :100]))
        self.assertTrue(torch.equal(buf[:, 900:], keep[:, 900:]))
        # a view whose rows need a contiguous copy, in place
        t = self.data(40, 30)
        keep = t.clone()
        atd.softmax(t.t(), out=t.t())
        self.expect(t.t(), keep.t())

    def test_out_with_strides(self):
        x = self.data(128, 2000, dtype="bfloat16")
        buf = torch.full((128, 2048), 7.0, device="cuda", dtype=torch.bfloat16)
        out = buf[:, :2000]
        self.assertIs(atd.softmax(x, out=out), out)
        self.expect(out, x)
        self.assertTrue((buf[:, 2000:] == 7).all().item())

    def test_bad_arguments(self):
        x = self.data(16, 32)
        with self.assertRaises(ValueError):
            atd.softmax(x.cpu())
        with self.assertRaises(TypeError):
            atd.softmax(x.double())
        with self.assertRaises(ValueError):
            atd.softmax(x, out=torch.empty(16, 31, device="cuda"))
        with self.assertRaises(TypeError):
            atd.softmax(x, out=torch.empty(16, 32, device="cuda", dtype=torch.float16))
        with self.assertRaises(ValueError):  # out overlaps x without being x
            big = self.data(17, 32)
            atd.softmax(big[:16], out=big[1:])
        with self.assertRaises(ValueError):  # out's elements overlap
            atd.softmax(x, out=torch.empty(32, device="cuda").expand(16, 32))
        with self.assertRaises(IndexError):
            atd.softmax(x, dim=2)

    def test_backward(self):
        x = self.data(64, 1000).requires_grad_()
        g = torch.rand(64, 1000, device="cuda")
        atd.softmax(x).backward(g)
        x2 = x.detach().double().requires_grad_()
        torch.softmax(x2, -1).backward(g.double())
        self.assertLessEqual(rel_err(x.grad, x2.grad), 1e-5)

    def test_eager_calls_launch_directly_and_traced_ones_go_through_the_ops(self):
        """Eager: no custom op on the profiler's record, forward or backward
        (their Python layers cost the host more than a small shape's
        kernels); under a dispatch mode (what make_fx and fake tensors trace
        with) the ops carry the call. Both give the same values and
        gradients."""
        from torch.profiler import ProfilerActivity, profile

        x, dy = self.data(64, 3000), self.data(64, 3000)
        for name in ("softmax", "log_softmax"):
            outs, grads = [], []
            for under_mode in (False, True):
                xa = x.clone().requires_grad_()
                with profile(activities=[ProfilerActivity.CPU]) as prof:
                    if under_mode:
                        seen, y = traced(lambda: getattr(atd, name)(xa))
                    else:
                        y = getattr(atd, name)(xa)
                    y.backward(dy)
                ops = {e.name for e in prof.events() if e.name.startswith("autotune_dispatch::")}
                with self.subTest(op=name, traced=under_mode):
                    if under_mode:
                        self.assertIn(f"autotune_dispatch.{name}", seen)
                        self.assertIn(f"autotune_dispatch::{name}", ops)
                    else:
                        self.assertEqual(ops, set(), "an eager call went through the custom ops")
                outs.append(y.detach())
                grads.append(xa.grad)
            self.assertTrue(torch.equal(outs[0], outs[1]), name)
            self.assertTrue(torch.equal(grads[0], grads[1]), name)

    def test_a_direct_write_bumps_the_version_autograd_checks(self):
        """A direct launch into a caller's tensor (out=, in place) counts as
        the ops' mutation did: autograd refuses a saved tensor changed."""
        for name in ("softmax", "log_softmax", "softmax_backward"):
            with self.subTest(op=name):
                a = self.data(16, 300).requires_grad_()
                y = atd.softmax(a * 1.0)  # y is saved for the backward
                before = y._version
                with torch.no_grad():
                    if name == "softmax_backward":
                        atd.softmax_backward(self.data(16, 300), y, out=y)
                    else:
                        getattr(atd, name)(y, out=y)
                self.assertGreater(y._version, before)
                with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
                    y.sum().backward()

    def test_opcheck(self):
        if not hasattr(torch.library, "opcheck"):
            self.skipTest("torch.library.opcheck needs PyTorch 2.4")
        x = self.data(32, 700)
        torch.library.opcheck(torch.ops.autotune_dispatch.softmax.default, (x,))
        torch.library.opcheck(torch.ops.autotune_dispatch.softmax_out.default,
                              (x, torch.empty_like(x)))
        torch.library.opcheck(torch.ops.autotune_dispatch.softmax_.default, (x.clone(),))

    def test_inside_torch_compile(self):
        # ops before and after the custom op, both exact in every dtype (a
        # power of two): adding 1.0 instead rounded the 1/3000-sized outputs
        # away in bf16 and failed the op for the test's own arithmetic
        f = torch.compile(lambda t: atd.softmax(t * 2.0) * 4.0, fullgraph=True)
        for dt in DTYPES:
            with self.subTest(dtype=dt):
                x = self.data(1024, 3000, dtype=dt)
                self.expect(f(x) / 4.0, x * 2.0)

    def test_in_place_inside_torch_compile(self):
        def g(t):
            atd.softmax(t, out=t)
            return t.sum(-1)
        f = torch.compile(g, fullgraph=True)
        x = self.data(256, 1500)
        before = x.clone()
        sums = f(x)
        self.expect(x, before)
        self.assertTrue(torch.allclose(sums, torch.ones_like(sums), atol=1e-4))

    def test_captured_cuda_graph(self):
        for dt in DTYPES:
            with self.subTest(dtype=dt):
                x = self.data(4096, 2048, dtype=dt)
                out = torch.empty_like(x)
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):  # the warm-up the package asks for
                    atd.softmax(x)
                    atd.softmax(x, out=out)
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    y = atd.softmax(x)
                    atd.softmax(x, out=out)
                x.copy_(self.data(4096, 2048, dtype=dt))
                out.zero_()
                graph.replay()
                torch.cuda.synchronize()
                self.expect(y, x)
                self.expect(out, x)

    def test_a_thread_that_had_not_touched_cuda(self):
        x = self.data(100, 5000)
        got = {}

        def work():
            try:
                got["y"] = atd.softmax(x)
                torch.cuda.synchronize()
            except Exception as exc:  # noqa: BLE001 (reported below)
                got["error"] = exc
        t = threading.Thread(target=work)
        t.start()
        t.join()
        self.assertNotIn("error", got)
        self.expect(got["y"], x)

    def test_query_and_version(self):
        c = atd.query(torch.float32, 4096, 1024)
        self.assertIn(c.level, ("exact", "nearest", "same-arch", "built-in", "derived", "tuned online", "predicted"))
        self.assertTrue(c.template.startswith("softmax_"), c)
        self.assertEqual(atd.version(), atd.__version__)


if __name__ == "__main__":
    unittest.main()
