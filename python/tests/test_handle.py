"""Handles, queries and error mapping through the real library
(autotune_dispatch/handle.py, errors.py), on this machine without a GPU:
the database found as the C library finds it, every status mapped to its
exception with the library's message, queries for a GPU described by
hand."""
import os
import re
import sqlite3
import tempfile
import unittest
import warnings

import autotune_dispatch as atd
from autotune_dispatch import errors
from autotune_dispatch import library as lib
from helpers import EXAMPLE_DB, H100, header_text, needs_library


class StatusTable(unittest.TestCase):
    def test_one_exception_per_status_of_the_header(self):
        listed = re.findall(r"X\((ATD_\w+), (\d+), \"([^\"]+)\"\)", header_text())
        self.assertEqual(len(listed), 12)
        for name, value, _ in listed:
            value = int(value)
            if value == 0:
                continue
            cls = errors.BY_STATUS[value]
            self.assertEqual((cls.status, cls.status_name), (value, name))
        self.assertEqual(len(errors.BY_STATUS), len(listed) - 1)

    def test_an_unknown_status_still_raises(self):
        e = errors.from_status(42, "what happened")
        self.assertIs(type(e), errors.Error)
        self.assertEqual((e.status, str(e)), (42, "what happened (unknown status 42)"))

    @needs_library
    def test_an_empty_message_takes_the_status_text(self):
        so = lib.library()
        listed = re.findall(r"X\((ATD_\w+), (\d+), \"([^\"]+)\"\)", header_text())
        for _, value, text in listed:
            self.assertEqual(so.atd_status_string(int(value)).decode(), text)


@needs_library
class OpenDatabase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.saved_cwd, self.saved_env = os.getcwd(), os.environ.get("AUTOTUNE_DB")
        os.chdir(self.dir.name)
        os.environ.pop("AUTOTUNE_DB", None)

    def tearDown(self):
        os.chdir(self.saved_cwd)
        if self.saved_env is None:
            os.environ.pop("AUTOTUNE_DB", None)
        else:
            os.environ["AUTOTUNE_DB"] = self.saved_env
        self.dir.cleanup()

    def test_missing_database_names_the_path(self):
        with self.assertRaises(atd.DatabaseMissing) as c:
            atd.Handle("nowhere.db", fallback=False)
        e = c.exception
        self.assertEqual((e.status, e.status_name), (5, "ATD_ERR_DB_MISSING"))
        self.assertEqual(str(e), "nowhere.db: no such tuning database")

    def test_no_path_is_autotune_db_in_the_working_folder(self):
        with self.assertRaises(atd.DatabaseMissing) as c:
            atd.Handle(fallback=False)
        self.assertEqual(str(c.exception), "autotune.db: no such tuning database")

    def test_no_path_is_autotune_db_variable(self):
        os.environ["AUTOTUNE_DB"] = os.path.join(self.dir.name, "from-env.db")
        with self.assertRaises(atd.DatabaseMissing) as c:
            atd.Handle(fallback=False)
        self.assertEqual(str(c.exception), f"{os.environ['AUTOTUNE_DB']}: no such tuning database")
        os.environ["AUTOTUNE_DB"] = EXAMPLE_DB
        with atd.Handle(fallback=False) as h:
            self.assertEqual(h.query("f32", 4096, 1024, gpu=H100).level, "exact")

    def test_corrupt_database(self):
        with open("bad.db", "wb") as f:
            f.write(b"this is not SQLite" * 100)
        with self.assertRaises(atd.DatabaseCorrupt) as c:
            atd.Handle("bad.db", fallback=False)
        self.assertEqual(c.exception.status, 6)
        self.assertTrue(str(c.exception).startswith("bad.db: "), str(c.exception))

    def test_fallback_warns_and_serves(self):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            h = atd.Handle("nowhere.db")
        self.assertEqual([x.category for x in w], [atd.DatabaseWarning])
        self.assertTrue(str(w[0].message).startswith("nowhere.db: no such tuning database; "))
        self.assertEqual(h.warning, str(w[0].message))
        # the seed models on an sm_90 GPU (built-in without NVRTC)
        self.assertIn(h.query("f32", 4096, 1024, gpu=H100).level, ("predicted", "built-in"))
        h.close()
        h.close()
        with self.assertRaises(atd.Error):
            h.query("f32", 4096, 1024, gpu=H100)

    def test_no_db_opens_nothing_and_warns_of_nothing(self):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            h = atd.Handle(EXAMPLE_DB, no_db=True)
        self.assertEqual(w, [])
        self.assertIsNone(h.warning)
        self.assertIsNone(h.db)
        with atd.Handle(EXAMPLE_DB) as tuned:
            self.assertEqual(tuned.query("f32", 4096, 1024, gpu=H100).level, "exact")
        self.assertIn(h.query("f32", 4096, 1024, gpu=H100).level, ("predicted", "built-in"))
        h.close()

    def test_a_winner_without_its_kernel_warns_and_is_not_served(self):
        with open(EXAMPLE_DB, "rb") as f, open("lost.db", "wb") as g:
            g.write(f.read())
        con = sqlite3.connect("lost.db")
        con.execute("DELETE FROM kernels WHERE result_id = (SELECT result_id FROM winners "
                    "WHERE dtype = 'f32' AND m = 4096 AND n = 1024)")
        con.commit()
        con.close()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            h = atd.Handle("lost.db", fallback=False, jit="off")
        self.assertEqual([x.category for x in w], [atd.DatabaseWarning])
        self.assertIn("lost.db: 1 tuned winner has no stored kernel", str(w[0].message))
        self.assertIn(f"f32 M=4096 N=1024 on {H100['name']} (", str(w[0].message))
        self.assertEqual(h.query("f32", 4096, 1024, gpu=H100).level, "nearest")
        self.assertEqual(h.query("f32", 4096, 2048, gpu=H100).level, "exact")
        h.close()

    def test_bad_jit_mode(self):
        with self.assertRaises(ValueError):
            atd.Handle(EXAMPLE_DB, jit="sometimes")


@needs_library
class Query(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.h = atd.Handle(EXAMPLE_DB, fallback=False)

    @classmethod
    def tearDownClass(cls):
        cls.h.close()

    def stored_winner(self, dtype, M, N):
        con = sqlite3.connect(f"file:{EXAMPLE_DB}?mode=ro", uri=True)
        row = con.execute("SELECT r.template, r.params, r.time_us FROM winners w JOIN results r "
                          "ON r.id = w.result_id WHERE w.dtype = ? AND w.m = ? AND w.n = ?",
                          (dtype, M, N)).fetchone()
        con.close()
        return row

    def test_a_tuned_shape_is_its_winner(self):
        template, params, us = self.stored_winner("f32", 4096, 1024)
        c = self.h.query("f32", 4096, 1024, gpu=H100)
        self.assertEqual(c, atd.Choice("exact", template, params, H100["name"], (4096, 1024), us,
                                       params))

    def test_log_softmax_derives_from_the_softmax_winner(self):
        # the example database has softmax's winners only: log_softmax is
        # never served by their code, but derived from them
        template, _, _ = self.stored_winner("f32", 4096, 1024)
        c = self.h.query("f32", 4096, 1024, gpu=H100, op="log_softmax")
        self.assertIn(c.level, ("derived", "built-in"))
        self.assertNotEqual(c.level, "exact")
        with self.assertRaises(ValueError):
            self.h.query("f32", 4096, 1024, gpu=H100, op="layernorm")

    def test_a_backward_op_is_never_served_by_a_forward_winner(self):
        # the example database has softmax's winners only: the backward ops
        # get the built-in kernel of their own family, never softmax's code
        for op in ("softmax_backward", "log_softmax_backward"):
            for jit in (self.h, atd.Handle(EXAMPLE_DB, fallback=False, jit="off")):
                c = jit.query("f32", 4096, 1024, gpu=H100, op=op)
                self.assertEqual(c.level, "built-in", op)
                self.assertEqual(c.template, "softmax_backward_loop", op)
                if jit is not self.h:
                    jit.close()

    def test_dtype_names(self):
        for name in ("bf16", "bfloat16", "torch.bfloat16"):
            self.assertEqual(self.h.query(name, 4096, 1024, gpu=H100).template,
                             self.stored_winner("bf16", 4096, 1024)[0])
        with self.assertRaises(TypeError):
            self.h.query("f64", 4096, 1024, gpu=H100)

    def test_a_gpu_named_by_name_and_cc_alone_is_the_databases(self):
        # its SM count from the database, as `autotune show --gpu --cc` takes it
        for cc in ((9, 0), "9.0"):
            named = {"name": H100["name"], "cc": cc}
            self.assertEqual(self.h.query("f32", 4096, 1024, gpu=named),
                             self.h.query("f32", 4096, 1024, gpu=H100))
        self.assertEqual(self.h.query("f32", 4096, 1024, gpu=named).level, "exact")

    def test_an_unknown_gpu_gets_the_built_in_kernel(self):
        c = self.h.query("f32", 4096, 1024, gpu={"name": "Some GPU", "cc": "7.5", "sm_count": 40})
        self.assertEqual((c.level, c.template, c.gpu, c.tuned_shape, c.tuned_us),
                         ("built-in", "softmax_online", "", None, None))

    def test_bad_shapes(self):
        with self.assertRaises(ValueError):
            self.h.query("f32", 0, 1024, gpu=H100)
        with self.assertRaises(TypeError):
            self.h.query("f32", 4096.0, 1024, gpu=H100)
        with self.assertRaises(TypeError):
            self.h.query("f32", 4096, 1024, gpu={"cc": (9, 0)})

    def test_the_current_gpu_without_one_raises_the_librarys_error(self):
        # no GPU here: the driver is missing (or, with PyTorch, it says so)
        if os.path.exists("/dev/nvidia0"):
            self.skipTest("this machine has a GPU")
        with self.assertRaises((atd.NoDriver, atd.Unavailable)) as c:
            self.h.query("f32", 4096, 1024)
        self.assertIn("GPU", str(c.exception))


@needs_library
class RawCalls(unittest.TestCase):
    """atd_softmax's failures, mapped (the package's own checks keep its
    softmax from making these calls)."""

    def test_invalid_argument_carries_the_message(self):
        with atd.Handle(EXAMPLE_DB) as h:
            s = lib.library().atd_softmax(h.pointer, 0, 256, 256, 0, 4, 4, 4, None)
            e = h.fail(s)
        self.assertIsInstance(e, atd.InvalidArgument)
        self.assertEqual(str(e), "atd_softmax: M and N must be at least 1 (M = 0, N = 4)")

    def test_no_driver(self):
        if os.path.exists("/dev/nvidia0"):
            self.skipTest("this machine has a GPU")
        with atd.Handle(EXAMPLE_DB) as h:
            e = h.fail(lib.library().atd_softmax(h.pointer, 0, 256, 256, 2, 4, 4, 4, None))
        self.assertIsInstance(e, atd.NoDriver)
        self.assertTrue(str(e).startswith("no NVIDIA driver found"), str(e))


if __name__ == "__main__":
    unittest.main()
