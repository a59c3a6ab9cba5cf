"""tools/train_step.py's parts that need no GPU: its arguments, why a
variant cannot run, its CSV rows and its table."""
import contextlib
import csv
import importlib.util
import io
import os
import tempfile
import types
import unittest

from helpers import ROOT


def load_tool():
    spec = importlib.util.spec_from_file_location("train_step", os.path.join(ROOT, "tools", "train_step.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ts = load_tool()


def usage_error(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            ts.parse_args(argv)
        except SystemExit as exc:
            return exc.code, err.getvalue()
    return None, err.getvalue()


class Arguments(unittest.TestCase):
    def test_gpt2_small_by_default_every_variant_torch_first(self):
        args = ts.parse_args([])
        self.assertEqual((args.layers, args.embd, args.heads, args.vocab, args.seq), (12, 768, 12, 50257, 1024))
        self.assertEqual(args.variant_list, list(ts.VARIANTS))
        self.assertEqual(args.variant_list[0], "torch")

    def test_the_reference_must_come_first(self):
        code, err = usage_error(["--variants", "atd,torch"])
        self.assertEqual(code, 2)
        self.assertIn("the first variant must be torch", err)

    def test_an_unknown_variant_is_named(self):
        code, err = usage_error(["--variants", "torch,apex"])
        self.assertEqual(code, 2)
        self.assertIn("unknown variant apex", err)

    def test_sizes_are_checked(self):
        self.assertEqual(usage_error(["--batch", "0"])[0], 2)
        self.assertEqual(usage_error(["--seq", "1"])[0], 2)


class Reasons(unittest.TestCase):
    def test_without_the_package_its_variants_are_unavailable(self):
        for v in ("atd_ce", "atd_ce_inplace", "atd_softmax", "atd"):
            self.assertEqual(ts.missing_reason(v, None, None), "unavailable: autotune_dispatch not importable")
        self.assertIsNone(ts.missing_reason("torch", None, None))
        self.assertIsNone(ts.missing_reason("torch_fp32", None, None))

    def test_a_package_without_cross_entropy_still_routes_the_softmax(self):
        atd = types.SimpleNamespace(__version__="0.2.0", softmax=print)
        self.assertEqual(ts.missing_reason("atd_ce", atd, None),
                         "unavailable: autotune_dispatch 0.2.0 has no cross_entropy")
        self.assertEqual(ts.missing_reason("atd", atd, None),
                         "unavailable: autotune_dispatch 0.2.0 has no cross_entropy")
        self.assertIsNone(ts.missing_reason("atd_softmax", atd, None))
        self.assertIsNone(ts.missing_reason("atd", types.SimpleNamespace(cross_entropy=print), None))

    def test_liger_missing_gives_the_import_s_reason(self):
        why = "unavailable: Liger-Kernel not importable (ModuleNotFoundError: No module named 'liger_kernel')"
        self.assertEqual(ts.missing_reason("liger", None, why), why)
        self.assertIsNone(ts.missing_reason("liger", None, types.SimpleNamespace()))

    def test_import_liger_says_why_where_it_is_absent(self):
        got = ts.import_liger()
        if not isinstance(got, str):
            self.skipTest("Liger-Kernel is installed here")
        self.assertTrue(got.startswith("unavailable: Liger-Kernel not importable ("), got)


class Rows(unittest.TestCase):
    def test_a_timed_variant_and_an_unavailable_one(self):
        args = ts.parse_args([])
        ok = ts.row_of("torch", {"loss": 10.987654321, "grads": {}, "ms": 100.0, "peak": 20480.4}, None,
                       args, 16, "NVIDIA H200")
        self.assertEqual((ok["status"], ok["loss"], ok["step_ms"], ok["tokens_per_s"], ok["peak_mib"]),
                         ("ok", "10.987654", "100.00", "163840", "20480"))
        self.assertEqual((ok["batch"], ok["seq"], ok["dtype"], ok["gpu"]), (16, 1024, "bf16", "NVIDIA H200"))
        gone = ts.row_of("liger", "unavailable: Liger-Kernel not importable (x)", None, args, 16, "NVIDIA H200")
        self.assertEqual(gone["status"], "unavailable: Liger-Kernel not importable (x)")
        self.assertNotIn("step_ms", gone)
        path = tempfile.NamedTemporaryFile(suffix=".csv", delete=False).name
        try:
            ts.write_csv(path, [ok, gone])
            with open(path, newline="") as f:
                got = list(csv.DictReader(f))
        finally:
            os.unlink(path)
        self.assertEqual(list(got[0]), ts.COLUMNS)
        self.assertEqual((got[1]["variant"], got[1]["step_ms"], got[1]["what"]),
                         ("liger", "", ts.VARIANTS["liger"][2]))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            ts.print_table([ok, gone])
        self.assertIn("liger", out.getvalue())
        self.assertIn("163840", out.getvalue())

    def test_the_compared_parameters_include_the_first_and_last_layers(self):
        self.assertEqual(ts.PARAMS["last_mlp"].format(last=11), "transformer.h.11.mlp.c_proj.weight")
        self.assertIn("grad_rel_h0_attn", ts.COLUMNS)


if __name__ == "__main__":
    unittest.main()
