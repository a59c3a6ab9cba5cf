"""The peer benchmark's parts that need no GPU (autotune_dispatch/peers.py):
reading a sweep config's shapes in its three forms, the grid and the seeded
draw, the arguments, why a method cannot run, the CSV it writes, and the
summary of a CSV."""
import contextlib
import csv
import io
import math
import os
import tempfile
import types
import unittest
from unittest import mock

from autotune_dispatch import peers
from helpers import ROOT


def config(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    f.write(text)
    f.close()
    return f.name


class Shapes(unittest.TestCase):
    def test_the_seeds_benchmark(self):
        shapes = peers.shapes_of(os.path.join(ROOT, "configs", "seeds-benchmark.yaml"))
        self.assertEqual(len(shapes), 196)
        self.assertEqual(shapes[:2], [("f32", 4096, 256), ("f32", 4096, 384)])
        self.assertEqual(shapes[97:99], [("f32", 4096, 12672), ("bf16", 4096, 256)])

    def test_lists_over_several_lines_and_comments(self):
        path = config("warmup: 5\nsweeps:\n  - op: softmax   # a comment\n    dtypes: [f16]\n"
                      "    M: [1, 8]\n    N: [32,\n        64]\n  - op: softmax\n    dtypes: [bf16, f32]\n"
                      "    M: 2\n    N: {from: 10, to: 30, step: 10}\n")
        try:
            self.assertEqual(peers.shapes_of(path), [
                ("f16", 1, 32), ("f16", 1, 64), ("f16", 8, 32), ("f16", 8, 64),
                ("bf16", 2, 10), ("bf16", 2, 20), ("bf16", 2, 30),
                ("f32", 2, 10), ("f32", 2, 20), ("f32", 2, 30)])
        finally:
            os.unlink(path)

    def test_a_value_it_cannot_read_names_the_entry(self):
        path = config("sweeps:\n  - op: softmax\n    dtypes: [f32]\n    M: many\n    N: 4\n")
        try:
            with self.assertRaises(ValueError) as c:
                peers.shapes_of(path)
            self.assertIn(f"{path}: sweep entry 1: cannot read M ('many')", str(c.exception))
        finally:
            os.unlink(path)

    def test_the_default_grid(self):
        self.assertEqual(len(peers.shapes_of(os.path.join(ROOT, "configs", "softmax.yaml"))), 189)


class Summary(unittest.TestCase):
    def test_ratio_to_the_best_peer(self):
        rows = []
        for method, us in (("lib", 10.0), ("torch", 20.0), ("triton", 15.0), ("compile", 30.0)):
            rows.append({"dtype": "f32", "M": "4096", "N": "1024", "flush": "clean",
                         "method": method, "status": "ok", "us": str(us)})
        rows.append({"dtype": "f32", "M": "4096", "N": "2048", "flush": "clean", "method": "lib",
                     "status": "ok", "us": "10"})
        rows.append({"dtype": "f32", "M": "4096", "N": "2048", "flush": "clean", "method": "torch",
                     "status": "ok", "us": "8"})
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            peers.summarize(rows)
        # 15/10 and 8/10: geomean sqrt(1.2) = 1.095
        self.assertIn("library / best peer (clean, time ratio peer/lib): geomean 1.095 over 2 shapes, "
                      "ahead or level at 1", text.getvalue())



def quiet(fn, *args):
    """fn(*args) with stdout and stderr captured: (its value, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        value = fn(*args)
    return value, out.getvalue(), err.getvalue()


def usage_error(argv):
    """The exit code and the message of peers' argument parsing of argv."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            peers.parse_args(argv)
        except SystemExit as exc:
            return exc.code, err.getvalue()
    return None, err.getvalue()


class CrossEntropyShapes(unittest.TestCase):
    def test_the_default_grid_spans_five_vocabularies_and_rows_1_to_16384(self):
        args, _, err = quiet(peers.parse_args, ["--op", "cross_entropy"])
        shapes = args.shape_list
        self.assertEqual(shapes[:3], [("bf16", 1, 32000), ("bf16", 1, 50257), ("bf16", 1, 128256)])
        self.assertEqual({s[2] for s in shapes}, {32000, 50257, 128256, 151936, 262144})
        self.assertEqual({s[1] for s in shapes}, {1, 64, 1024, 4096, 16384})
        self.assertEqual([s[0] for s in shapes][::25], ["bf16", "f16", "f32"])
        # f32 at 16384 x 151936 and 16384 x 262144 pass 8 GiB: left out, and said
        self.assertEqual(len(shapes), 73)
        self.assertIn("peers: f32 16384x262144 left out: over --max-gib 8", err)
        self.assertNotIn(("f32", 16384, 262144), shapes)

    def test_max_gib_bounds_one_tensor(self):
        args, _, _ = quiet(peers.parse_args, ["--op", "cross_entropy", "--max-gib", "16"])
        self.assertEqual(len(args.shape_list), 75)  # f32 16384 x 262144 is 16 GiB exactly

    def test_grid_options_and_a_slice(self):
        args = peers.parse_args(["--op", "cross_entropy", "--dtypes", "f16", "--rows", "2,8",
                                 "--vocabs", "100,200", "--shapes", "1:3"])
        self.assertEqual(args.shape_list, [("f16", 2, 200), ("f16", 8, 100)])

    def test_a_config_gives_any_op_its_shapes(self):
        args = peers.parse_args(["--op", "softmax_backward", "-c",
                                 os.path.join(ROOT, "configs", "seeds-benchmark.yaml")])
        self.assertEqual(len(args.shape_list), 196)

    def test_the_softmax_ops_default_to_the_generalization_config(self):
        cwd = os.getcwd()
        os.chdir(ROOT)  # the default is relative to the checkout, as the command is run
        self.addCleanup(os.chdir, cwd)
        args = peers.parse_args(["--op", "log_softmax_backward"])
        self.assertEqual(args.shape_list, peers.shapes_of(peers.DEFAULT_CONFIG))

    def test_a_grid_for_a_softmax_op_when_asked(self):
        args = peers.parse_args(["--op", "log_softmax_backward", "--rows", "3", "--cols", "7",
                                 "--dtypes", "f32"])
        self.assertEqual(args.shape_list, [("f32", 3, 7)])


class RandomShapes(unittest.TestCase):
    def test_the_same_seed_draws_the_same_shapes(self):
        a = peers.random_shapes(7, 30, "cross_entropy")
        self.assertEqual(a, peers.random_shapes(7, 30, "cross_entropy"))
        self.assertNotEqual(a, peers.random_shapes(8, 30, "cross_entropy"))
        self.assertEqual(len(set(a)), 30)

    def test_cross_entropy_draws_rows_and_vocabularies_of_language_models(self):
        for dt, M, N in peers.random_shapes(1, 200, "cross_entropy"):
            self.assertIn(dt, ("f32", "f16", "bf16"))
            self.assertTrue(1 <= M <= 16384 and 1000 <= N <= 262144, (M, N))

    def test_the_softmax_ops_draw_as_random_shapes_py(self):
        shapes = peers.random_shapes(1, 200, "softmax_backward")
        self.assertTrue(all(1 <= M <= 10 ** 6 and 1 <= N <= 4 * 10 ** 6 for _, M, N in shapes))
        self.assertLess(min(N for _, _, N in shapes), 1000)  # not cross_entropy's range

    def test_random_with_parse_args_then_the_memory_bound(self):
        args, _, _ = quiet(peers.parse_args, ["--op", "softmax", "--random", "3", "--count", "40",
                                              "--max-gib", "0.5"])
        drawn = peers.random_shapes(3, 40, "softmax")
        kept, dropped = peers.within_memory(drawn, 0.5 * (1 << 30))
        self.assertEqual(args.shape_list, kept)
        self.assertEqual(len(kept) + len(dropped), 40)
        self.assertTrue(all(M * N * peers.ELEMENT_BYTES[dt] > 0.5 * (1 << 30) for dt, M, N in dropped))


class Arguments(unittest.TestCase):
    def test_unknown_method_is_a_usage_error_naming_it(self):
        code, err = usage_error(["--op", "cross_entropy", "--methods", "torch,bogus"])
        self.assertEqual(code, 2)
        self.assertIn("unknown method bogus (known: lib, lib_nodb", err)

    def test_a_mode_the_op_lacks_is_a_usage_error(self):
        code, err = usage_error(["--op", "softmax", "--modes", "fwd_bwd"])
        self.assertEqual(code, 2)
        self.assertIn("softmax has no mode fwd_bwd (it has: fwd)", err)

    def test_an_unknown_op_is_a_usage_error(self):
        self.assertEqual(usage_error(["--op", "layer_norm"])[0], 2)

    def test_an_unknown_dtype_in_the_grid_is_a_usage_error(self):
        code, err = usage_error(["--op", "cross_entropy", "--dtypes", "f64"])
        self.assertEqual(code, 2)
        self.assertIn("unknown dtype f64", err)

    def test_each_op_has_its_methods_and_modes(self):
        args = peers.parse_args(["--op", "cross_entropy", "--rows", "1", "--cols", "10"])
        self.assertEqual(args.wanted, ["lib", "torch", "compile", "liger", "quack", "copy"])
        self.assertEqual(args.mode_list, ["fwd_bwd", "fwd"])
        args = peers.parse_args(["--op", "log_softmax", "--rows", "1", "--cols", "10"])
        self.assertEqual(args.wanted, [m for m in peers.METHODS if m != "lib_twin"])  # asked for only
        self.assertEqual(peers.parse_args(["--op", "softmax_backward", "--rows", "1"]).mode_list, ["bwd"])

    def test_list_shapes_prints_them_without_a_gpu(self):
        code, out, _ = quiet(peers.main, ["--op", "cross_entropy", "--list-shapes", "--dtypes", "bf16",
                                          "--rows", "1,4", "--vocabs", "50257"])
        self.assertEqual(code, 0)
        self.assertEqual(out, "bf16 1 50257\nbf16 4 50257\n")


class Reasons(unittest.TestCase):
    def test_liger_has_no_log_softmax(self):
        self.assertEqual(peers.no_op_reason("liger", "log_softmax"),
                         "unavailable: Liger-Kernel has no log_softmax")
        self.assertEqual(peers.no_op_reason("liger", "log_softmax_backward"),
                         "unavailable: Liger-Kernel has no log_softmax_backward")
        for op in ("softmax", "softmax_backward", "cross_entropy"):
            self.assertIsNone(peers.no_op_reason("liger", op))

    def test_the_tutorial_is_softmax_forward_only(self):
        self.assertIsNone(peers.no_op_reason("triton", "softmax"))
        self.assertEqual(peers.no_op_reason("triton", "cross_entropy"),
                         "unavailable: the Triton tutorial has no cross_entropy")

    def test_the_library_variants_are_the_softmax_ops_and_their_backward(self):
        self.assertIsNone(peers.no_op_reason("lib_tuned", "log_softmax"))
        for method in ("lib_nodb", "lib_exact", "lib_twin"):
            for op in ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward"):
                self.assertIsNone(peers.no_op_reason(method, op))
        self.assertEqual(peers.no_op_reason("lib_nodb", "cross_entropy"),
                         "unavailable: lib_nodb is measured for softmax, log_softmax, "
                         "softmax_backward, log_softmax_backward only")
        self.assertEqual(peers.no_op_reason("lib_tuned", "softmax_backward"),
                         "unavailable: lib_tuned is measured for softmax, log_softmax only")
        self.assertIn("lib_nodb", peers.methods_of(None, "log_softmax_backward"))
        self.assertNotIn("lib_nodb", peers.methods_of(None, "cross_entropy"))
        for method in ("lib", "torch", "compile", "copy"):
            self.assertIsNone(peers.no_op_reason(method, "cross_entropy"))

    def test_a_library_handle_not_opened_says_why_in_its_cell(self):
        ctx = types.SimpleNamespace(handles={"lib": "the default handle"})
        self.assertEqual(peers.Context.handle_or_reason(ctx, "lib"), ("the default handle", None))
        self.assertEqual(peers.Context.handle_or_reason(ctx, "lib_exact"),
                         (None, "unavailable: no --exact-db"))
        self.assertEqual(peers.Context.handle_or_reason(ctx, "lib_twin"), (None, "unavailable"))

    def test_the_tutorial_stops_where_its_int32_row_offsets_would_overflow(self):
        self.assertIsNone(peers.tutorial_reason(2**31 // 4096, 4096))
        self.assertIsNone(peers.tutorial_reason(1, 2**31 - 1))
        self.assertIn("int32 row offsets", peers.tutorial_reason(183195, 12025))
        self.assertIn("int32 row offsets", peers.tutorial_reason(2**31 // 4096 + 1, 4096))

    def test_a_package_without_the_op_says_its_version(self):
        old = types.SimpleNamespace(__version__="0.2.0", softmax=print)
        self.assertEqual(peers.lib_reason(old, "cross_entropy"),
                         "unavailable: autotune_dispatch 0.2.0 has no cross_entropy")
        self.assertEqual(peers.lib_reason(old, "softmax_backward"),
                         "unavailable: autotune_dispatch 0.2.0 has no softmax_backward")
        self.assertIsNone(peers.lib_reason(old, "softmax"))
        new = types.SimpleNamespace(__version__="0.3.0", cross_entropy=print)
        self.assertIsNone(peers.lib_reason(new, "cross_entropy"))

    def test_a_peer_s_rows_name_its_release(self):
        with mock.patch("importlib.metadata.version", lambda dist: "9.9"):
            versions = peers.peer_versions()
        self.assertEqual((versions["liger"], versions["quack"], versions["compile"]),
                         ("liger-kernel 9.9", "quack-kernels 9.9", "torch 9.9"))

    def test_a_package_that_cannot_be_imported_says_why(self):
        with mock.patch.dict(peers.PEER_MODULES, {"quack": ("no_such_module_for_the_peers_test",)}):
            mods, reason = peers.import_peer("quack")
        self.assertIsNone(mods)
        self.assertEqual(reason, "unavailable: QuACK not importable (ModuleNotFoundError: No module "
                                 "named 'no_such_module_for_the_peers_test')")


class Check(unittest.TestCase):
    def test_within_the_tolerance_or_twice_the_dtype_s_own_rounding(self):
        self.assertTrue(peers.passes(9e-3, 1e-3, "bf16"))
        self.assertFalse(peers.passes(2e-2, 1e-3, "bf16"))
        self.assertTrue(peers.passes(2e-2, 1.5e-2, "f16"))  # an underflowing f16 gradient
        self.assertFalse(peers.passes(2e-5, 1e-8, "f32"))
        self.assertFalse(peers.passes(math.nan, 0.0, "f32"))
        self.assertFalse(peers.passes(math.inf, 0.0, "bf16"))


class CsvRows(unittest.TestCase):
    KEY = ("bf16", 4096, 50257, "cross_entropy", "fwd_bwd")

    def rows(self):
        nbytes = 2 * 4096 * 50257 * 2
        rows = []
        for flush in ("clean", "dirty"):
            rows.append(peers.csv_row(self.KEY, "copy", flush, "ok", 200.0, nbytes, None, None, "", "H200"))
            rows.append(peers.csv_row(self.KEY, "torch", flush, "ok", 800.0, nbytes, 1e-3, 2e-3, "", "H200"))
            rows.append(peers.csv_row(self.KEY, "liger", flush, "unavailable: Liger-Kernel not importable "
                                      "(ModuleNotFoundError: No module named 'liger_kernel')", math.nan,
                                      nbytes, None, None, "", "H200"))
            rows.append(peers.csv_row(self.KEY, "lib", flush, "check failed", math.nan, nbytes, 0.5, 0.7,
                                      "", "H200"))
        return peers.fill_copy_ratio(rows)

    def test_the_columns_are_the_softmax_csv_s_then_op_mode_grad_err_copy_ratio(self):
        self.assertEqual(peers.COLUMNS[:11], ["dtype", "M", "N", "flush", "method", "status", "us", "gbps",
                                              "rel_err", "served_by", "gpu"])
        self.assertEqual(peers.COLUMNS[11:], ["op", "mode", "grad_err", "copy_ratio"])

    def test_written_and_read_back(self):
        path = tempfile.NamedTemporaryFile(suffix=".csv", delete=False).name
        try:
            out, writer = peers.open_csv(path, append=False)
            writer.writerows(self.rows())
            out.close()
            with open(path, newline="") as f:
                self.assertEqual(f.readline().strip(), ",".join(peers.COLUMNS))  # no "_gbps"
            with open(path, newline="") as f:
                got = list(csv.DictReader(f))
        finally:
            os.unlink(path)
        self.assertEqual(len(got), 8)
        copy, torch_, liger, lib = got[:4]
        self.assertEqual((copy["us"], copy["gbps"], copy["copy_ratio"]), ("200.000", "4117.1", "1.000"))
        self.assertEqual((torch_["us"], torch_["gbps"], torch_["copy_ratio"]), ("800.000", "1029.3", "0.250"))
        self.assertEqual((torch_["rel_err"], torch_["grad_err"]), ("1.00e-03", "2.00e-03"))
        self.assertEqual((torch_["op"], torch_["mode"]), ("cross_entropy", "fwd_bwd"))
        self.assertTrue(liger["status"].startswith("unavailable: Liger-Kernel not importable"))
        self.assertEqual((liger["us"], liger["gbps"], liger["copy_ratio"]), ("nan", "nan", ""))
        self.assertEqual((lib["status"], lib["rel_err"], lib["grad_err"], lib["copy_ratio"]),
                         ("check failed", "5.00e-01", "7.00e-01", ""))

    def test_appending_writes_no_second_header(self):
        path = tempfile.NamedTemporaryFile(suffix=".csv", delete=False).name
        try:
            for append in (False, True):
                out, writer = peers.open_csv(path, append=append)
                writer.writerows(self.rows()[:1])
                out.close()
            with open(path, newline="") as f:
                self.assertEqual(len(list(csv.DictReader(f))), 2)
        finally:
            os.unlink(path)

    def test_the_summary_keeps_cross_entropy_s_modes_apart(self):
        rows = []
        for mode, lib_us, torch_us in (("fwd_bwd", 100.0, 300.0), ("fwd", 50.0, 100.0)):
            for method, us in (("lib", lib_us), ("torch", torch_us)):
                rows.append(peers.csv_row(("bf16", 4096, 50257, "cross_entropy", mode), method, "clean", "ok",
                                          us, 1, None, None, "", "H200"))
        _, out, _ = quiet(peers.summarize, [{k: str(v) for k, v in r.items()} for r in rows])
        self.assertIn("library / best peer (clean fwd_bwd, time ratio peer/lib): geomean 3.000", out)
        self.assertIn("library / best peer (clean fwd, time ratio peer/lib): geomean 2.000", out)



class FakeClock:
    """CUDA events on a clock that each method's call advances by its own
    time, and every call's name in order: interleaved_median_us without a GPU."""

    def __init__(self, us, level=lambda call: 0.0):
        self.us, self.level, self.now, self.calls = us, level, 0.0, []

    def method(self, name):
        def call():
            self.now += self.us[name] + self.level(len(self.calls))
            self.calls.append(name)
        return call

    def event(self, enable_timing=True):
        clock = self

        class Event:
            def record(self):
                self.t = clock.now

            def elapsed_time(self, end):
                return (end.t - self.t) / 1e3  # ms, as torch's
        return Event()


class Interleaved(unittest.TestCase):
    def measure(self, clock, names, reps, warmup=1):
        cuda = types.SimpleNamespace(Event=clock.event, synchronize=lambda: None)
        with mock.patch.object(peers, "torch", types.SimpleNamespace(cuda=cuda)):
            return peers.interleaved_median_us({n: clock.method(n) for n in names}, lambda mode: None,
                                               "clean", warmup, reps, chunk=4)

    def test_each_method_s_median_of_its_own_calls(self):
        clock = FakeClock({"lib": 4.0, "torch": 4.5, "copy": 3.9})
        got = self.measure(clock, ["lib", "torch", "copy"], 10)
        self.assertEqual(sorted(got), ["copy", "lib", "torch"])
        for name, us in (("lib", 4.0), ("torch", 4.5), ("copy", 3.9)):
            self.assertAlmostEqual(got[name], us, places=6)

    def test_methods_take_turns_call_by_call_from_a_rotating_first(self):
        clock = FakeClock({"a": 1.0, "b": 1.0, "c": 1.0})
        self.measure(clock, ["a", "b", "c"], 6, warmup=0)
        self.assertEqual("".join(clock.calls), "abc" "bca" "cab" "abc" "bca" "cab")

    def test_a_level_that_shifts_between_runs_falls_on_every_method(self):
        # a level 0.4 us up for the second half of the calls: timed one
        # method after the other, b would take all of it (0.45 apart)
        clock = FakeClock({"a": 4.0, "b": 4.05}, level=lambda call: 0.4 if call >= 10 else 0.0)
        got = self.measure(clock, ["a", "b"], 5, warmup=0)
        self.assertAlmostEqual(got["b"] - got["a"], 0.05, places=6)


class Interface(unittest.TestCase):
    def test_what_tools_variant_bench_uses_is_still_there(self):
        for name in ("Flusher", "GpuHold", "TutorialSoftmax", "TORCH_DTYPES", "TOLERANCE", "median_us",
                     "interleaved_median_us",
                     "rel_err", "triton"):
            self.assertTrue(hasattr(peers, name), name)


if __name__ == "__main__":
    unittest.main()
