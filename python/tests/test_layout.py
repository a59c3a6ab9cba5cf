"""The argument checks and launch plans of softmax over tensors
(autotune_dispatch/layout.py): plain shapes and strides, no PyTorch, no
GPU."""
import unittest

from autotune_dispatch import layout
from autotune_dispatch.layout import Plan, TensorInfo


def info(shape, strides=None, dtype="float32", device="cuda:0"):
    if strides is None:  # contiguous
        strides, step = [], 1
        for n in reversed(shape):
            strides.insert(0, step)
            step *= max(n, 1)
    return TensorInfo(dtype, device, tuple(shape), tuple(strides))


class Checks(unittest.TestCase):
    def test_accepts_the_three_dtypes_on_a_cuda_device(self):
        for dt in ("float32", "float16", "bfloat16"):
            self.assertEqual(layout.check(info((4, 8), dtype=dt), -1), 1)

    def test_refuses_other_dtypes_naming_them(self):
        with self.assertRaises(TypeError) as c:
            layout.check(info((4, 8), dtype="float64"))
        self.assertEqual(str(c.exception), "autotune_dispatch.softmax: x is float64; the library "
                         "computes float32, float16 and bfloat16")

    def test_refuses_a_cpu_tensor(self):
        with self.assertRaises(ValueError) as c:
            layout.check(info((4, 8), device="cpu"))
        self.assertEqual(str(c.exception),
                         "autotune_dispatch.softmax: x is on cpu; it must be a CUDA tensor")

    def test_dim_as_pytorch_reads_it(self):
        self.assertEqual(layout.check(info((2, 3, 4)), 0), 0)
        self.assertEqual(layout.check(info((2, 3, 4)), -2), 1)
        self.assertEqual(layout.normalize_dim(0, 0), 0)
        self.assertEqual(layout.normalize_dim(-1, 0), 0)
        with self.assertRaises(IndexError) as c:
            layout.check(info((2, 3)), 2)
        self.assertEqual(str(c.exception),
                         "Dimension out of range (expected to be in range of [-2, 1], but got 2)")
        with self.assertRaises(TypeError):
            layout.normalize_dim(1.0, 2)
        with self.assertRaises(TypeError):
            layout.normalize_dim(True, 2)

    def test_out_must_match_x(self):
        x = info((4, 8))
        with self.assertRaises(TypeError) as c:
            layout.check(x, -1, info((4, 8), dtype="float16"))
        self.assertIn("out is float16 and x is float32", str(c.exception))
        with self.assertRaises(ValueError) as c:
            layout.check(x, -1, info((4, 8), device="cuda:1"))
        self.assertIn("out is on cuda:1 and x on cuda:0", str(c.exception))
        with self.assertRaises(ValueError) as c:
            layout.check(x, -1, info((8, 4)))
        self.assertIn("out has shape [8, 4] and x [4, 8]", str(c.exception))
        self.assertEqual(layout.check(x, -1, info((4, 8), (16, 1))), 1)


class GradChecks(unittest.TestCase):
    what = "autotune_dispatch.softmax_backward"

    def test_y_and_dy_must_match(self):
        y = info((4, 8))
        self.assertEqual(layout.check_grad(y, info((4, 8), (16, 1))), 1)
        self.assertEqual(layout.check_grad(y, info((4, 8)), 0), 0)
        with self.assertRaises(TypeError) as c:
            layout.check_grad(y, info((4, 8), dtype="float16"))
        self.assertEqual(str(c.exception), f"{self.what}: dy is float16 and y is float32; they must match")
        with self.assertRaises(ValueError) as c:
            layout.check_grad(y, info((4, 8), device="cuda:1"))
        self.assertIn("dy is on cuda:1 and y on cuda:0", str(c.exception))
        with self.assertRaises(ValueError) as c:
            layout.check_grad(y, info((4, 7)))
        self.assertIn("dy has shape [4, 7] and y [4, 8]", str(c.exception))

    def test_y_must_be_a_cuda_tensor_the_library_computes(self):
        with self.assertRaises(TypeError) as c:
            layout.check_grad(info((4, 8), dtype="float64"), info((4, 8), dtype="float64"),
                              what="autotune_dispatch.log_softmax_backward")
        self.assertEqual(str(c.exception), "autotune_dispatch.log_softmax_backward: y is float64; "
                         "the library computes float32, float16 and bfloat16")
        with self.assertRaises(ValueError):
            layout.check_grad(info((4, 8), device="cpu"), info((4, 8), device="cpu"))
        with self.assertRaises(IndexError):
            layout.check_grad(info((4, 8)), info((4, 8)), 2)


class GradRows(unittest.TestCase):
    def test_rows_of_one_stride_are_one_launch(self):
        self.assertEqual(layout.rows((2, 3, 5), (15, 5, 1)), (6, 5, 5))
        self.assertEqual(layout.rows((4, 5), (8, 1)), (4, 5, 8))  # x[:, :5] of 4 x 8
        self.assertEqual(layout.rows((), ()), (1, 1, 1))
        self.assertEqual(layout.rows((1, 7), (99, 1)), (1, 7, 7))

    def test_anything_else_is_made_contiguous_first(self):
        self.assertIsNone(layout.rows((4, 5), (1, 4)))       # the last dim not contiguous
        self.assertIsNone(layout.rows((4, 5), (0, 0)))       # an expanded gradient (sum's)
        self.assertIsNone(layout.rows((3, 4, 5), (30, 5, 1)))  # rows of two strides
        self.assertIsNone(layout.rows((4, 5), (3, 1)))       # rows that overlap


class Plans(unittest.TestCase):
    def test_contiguous_batch_dims_are_one_launch(self):
        self.assertEqual(layout.plan((2, 3, 5), (15, 5, 1), (15, 5, 1)), Plan(6, 5, 5, 5, ()))

    def test_a_row_stride_is_kept(self):
        # rows of 5 at a stride of 8 (x[:, :5] of a 4 x 8 tensor) into a contiguous y
        self.assertEqual(layout.plan((4, 5), (8, 1), (5, 1)), Plan(4, 5, 8, 5, ()))

    def test_batch_dims_that_do_not_collapse_repeat_the_launch(self):
        # x[:, :4] of a 3 x 6 x 5 tensor: 4 rows, then a gap of 2
        p = layout.plan((3, 4, 5), (30, 5, 1), (20, 5, 1))
        self.assertEqual(p, Plan(4, 5, 5, 5, ((3, 30, 20),)))
        self.assertEqual(layout.launch_offsets(p), [(0, 0), (30, 20), (60, 40)])
        # x[:, ::2] of a 3 x 8 x 5 tensor does collapse: rows every 10 throughout
        self.assertEqual(layout.plan((3, 4, 5), (40, 10, 1), (20, 5, 1)), Plan(12, 5, 10, 5, ()))

    def test_launches_over_two_outer_dims_in_order(self):
        p = layout.plan((2, 2, 3, 4), (100, 40, 5, 1), (24, 12, 4, 1))
        self.assertEqual(p.outer, ((2, 100, 24), (2, 40, 12)))
        self.assertEqual(layout.launch_offsets(p), [(0, 0), (40, 12), (100, 24), (140, 36)])

    def test_size_one_dims_are_ignored(self):
        self.assertEqual(layout.plan((1, 4, 1, 6), (999, 6, 7, 1), (24, 6, 6, 1)),
                         Plan(4, 6, 6, 6, ()))

    def test_a_single_row_and_a_scalar(self):
        self.assertEqual(layout.plan((7,), (1,), (1,)), Plan(1, 7, 7, 7, ()))
        self.assertEqual(layout.plan((), (), ()), Plan(1, 1, 1, 1, ()))

    def test_rows_not_contiguous_need_a_copy(self):
        self.assertIsNone(layout.plan((4, 5), (1, 4), (5, 1)))  # x transposed
        self.assertIsNone(layout.plan((4, 5), (5, 1), (1, 4)))  # y transposed

    def test_a_single_element_row_takes_any_stride(self):
        self.assertEqual(layout.plan((4, 1), (3, 7), (1, 1)), Plan(4, 1, 3, 1, ()))

    def test_overlapping_or_broadcast_rows_need_a_copy(self):
        self.assertIsNone(layout.plan((4, 5), (0, 1), (5, 1)))  # x expanded
        self.assertIsNone(layout.plan((4, 5), (3, 1), (5, 1)))  # rows overlap

    def test_too_many_launches_need_a_copy(self):
        shape, xs, ys = (17, 2, 5), (20, 5, 1), (10, 5, 1)
        self.assertIsNone(layout.plan(shape, xs, ys))
        self.assertEqual(len(layout.launch_offsets(layout.plan(shape, xs, ys, max_launches=17))), 17)


class Overlap(unittest.TestCase):
    def test_distinct_elements(self):
        self.assertTrue(layout.non_overlapping((4, 5), (5, 1)))
        self.assertTrue(layout.non_overlapping((4, 5), (8, 1)))
        self.assertTrue(layout.non_overlapping((5, 4), (1, 5)))
        self.assertTrue(layout.non_overlapping((1, 5), (0, 1)))

    def test_shared_elements(self):
        self.assertFalse(layout.non_overlapping((4, 5), (0, 1)))
        self.assertFalse(layout.non_overlapping((4, 5), (3, 1)))


if __name__ == "__main__":
    unittest.main()


class CrossEntropyChecks(unittest.TestCase):
    what = "autotune_dispatch.cross_entropy"

    def check(self, logits=None, target=None, **kw):
        logits = logits or info((6, 4, 1000), dtype="bfloat16")
        target = target or info((6, 4), dtype="int64")
        return layout.check_cross_entropy(logits, target, **kw)

    def test_rows_and_classes(self):
        self.assertEqual(self.check(), (24, 1000))
        self.assertEqual(self.check(target=info((6, 4), dtype="int32")), (24, 1000))
        self.assertEqual(self.check(info((1000,)), info((), dtype="int64")), (1, 1000))
        for r in ("none", "sum", "mean"):
            self.assertEqual(self.check(reduction=r), (24, 1000))
        self.assertEqual(self.check(label_smoothing=1.0, z_loss=1e-4, softcap=30.0), (24, 1000))

    def test_bad_options_are_refused_naming_them(self):
        cases = [({"reduction": "avg"}, "reduction must be 'none', 'sum' or 'mean', got 'avg'"),
                 ({"label_smoothing": -0.1}, "label_smoothing must be in [0, 1], got -0.1"),
                 ({"label_smoothing": 1.5}, "label_smoothing must be in [0, 1], got 1.5"),
                 ({"label_smoothing": float("nan")}, "label_smoothing must be in [0, 1]"),
                 ({"z_loss": -1e-4}, "z_loss must be finite and at least 0, got -0.0001"),
                 ({"z_loss": float("inf")}, "z_loss must be finite and at least 0"),
                 ({"softcap": 0.0}, "softcap must be None or finite and positive, got 0.0"),
                 ({"softcap": -30.0}, "softcap must be None or finite and positive")]
        for kw, says in cases:
            with self.subTest(**kw):
                with self.assertRaises(ValueError) as c:
                    self.check(**kw)
                self.assertIn(f"{self.what}: {says}", str(c.exception))

    def test_bad_tensors_are_refused(self):
        with self.assertRaises(TypeError) as c:
            self.check(info((4, 8), dtype="float64"), info((4,), dtype="int64"))
        self.assertIn("logits are float64", str(c.exception))
        with self.assertRaises(TypeError) as c:
            self.check(info((4, 8)), info((4,), dtype="float32"))
        self.assertIn("target is float32; it must be int64 or int32", str(c.exception))
        with self.assertRaises(ValueError):
            self.check(info((4, 8), device="cpu"), info((4,), dtype="int64", device="cpu"))
        with self.assertRaises(ValueError):
            self.check(info((4, 8)), info((4,), dtype="int64", device="cuda:1"))
        with self.assertRaises(ValueError) as c:
            self.check(info((4, 8)), info((8,), dtype="int64"))
        self.assertIn("target has shape [8]; logits of shape [4, 8] need [4] (classes last)",
                      str(c.exception))
        with self.assertRaises(ValueError) as c:
            self.check(info((4, 0)), info((4,), dtype="int64"))
        self.assertIn("no classes", str(c.exception))
