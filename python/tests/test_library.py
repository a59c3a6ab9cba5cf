"""Finding and loading libautotune-dispatch (autotune_dispatch/library.py)
and the versions that must agree: no GPU, no PyTorch."""
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

import autotune_dispatch
from autotune_dispatch import errors, library
from helpers import BUILT_LIB, HEADER, ROOT, header_text, needs_library

PACKAGE_DIR = os.path.join(ROOT, "python", "autotune_dispatch")


class Discovery(unittest.TestCase):
    def test_the_variable_is_the_only_place_when_set(self):
        got = library.candidates({"AUTOTUNE_DISPATCH_LIB": "/x/lib.so"}, PACKAGE_DIR, "/venv")
        self.assertEqual(got, [("$AUTOTUNE_DISPATCH_LIB", "/x/lib.so")])

    def test_checkout_then_prefix_then_loader_then_usr_local(self):
        got = library.candidates({}, PACKAGE_DIR, "/venv")
        self.assertEqual([what for _, what in got], [
            BUILT_LIB, "/venv/lib/libautotune-dispatch.so.0", "libautotune-dispatch.so.0",
            "/usr/local/lib/libautotune-dispatch.so.0"])

    def test_an_installed_package_has_no_checkout(self):
        with tempfile.TemporaryDirectory() as d:
            pkg = os.path.join(d, "python", "autotune_dispatch")  # named python/, but no header
            os.makedirs(pkg)
            self.assertIsNone(library.checkout_library(pkg))
            got = library.candidates({}, pkg, "/venv")
            self.assertEqual(got[0], ("the installed prefix", "/venv/lib/libautotune-dispatch.so.0"))

    def test_an_installed_package_looks_in_the_checkout_it_was_built_from(self):
        # after the installed prefix (a library installed into the
        # environment is meant for it), before the loader's search
        outside = os.path.join("/venv", "site-packages", "autotune_dispatch")
        got = library.candidates({}, outside, "/venv", built_from=ROOT)
        self.assertEqual(got, [
            ("the installed prefix", "/venv/lib/libautotune-dispatch.so.0"),
            ("the checkout it was built from", BUILT_LIB),
            ("the dynamic loader's search", "libautotune-dispatch.so.0"),
            ("/usr/local/lib", "/usr/local/lib/libautotune-dispatch.so.0")])
        # run from a checkout, that checkout is first and named once
        got = library.candidates({}, PACKAGE_DIR, "/venv", built_from=ROOT)
        self.assertEqual([what for _, what in got].count(BUILT_LIB), 1)
        self.assertEqual(got[0], ("the source checkout (make lib)", BUILT_LIB))

    def test_a_wrong_variable_says_where_it_looked(self):
        with self.assertRaises(errors.LibraryNotFound) as c:
            library.load({"AUTOTUNE_DISPATCH_LIB": "/nonexistent/libx.so"}, PACKAGE_DIR)
        msg = str(c.exception)
        self.assertIn("$AUTOTUNE_DISPATCH_LIB: /nonexistent/libx.so: no such file", msg)
        self.assertIn("the only place looked at", msg)
        self.assertIn("make lib", msg)

    def not_found(self, checkout, prefix):
        """The message of a load that finds nothing, from a package outside
        any checkout, built from checkout, with prefix. In a fresh
        interpreter: in this one, a test that loaded the library lets the
        loader's search find it by its soname."""
        outside = os.path.join(prefix, "site-packages", "autotune_dispatch")
        code = ("import sys\nfrom autotune_dispatch import errors, library\n"
                "try:\n    library.load({}, *sys.argv[1:])\n"
                "except errors.LibraryNotFound as e:\n    print(e)\n    sys.exit(3)\n")
        r = subprocess.run([sys.executable, "-c", code, outside, prefix, checkout],
                           env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")),
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 0:
            self.skipTest("this machine has the library in the loader's path")
        self.assertEqual(r.returncode, 3, r.stderr)
        return r.stdout

    def test_the_hint_names_every_place_and_the_variable(self):
        with tempfile.TemporaryDirectory() as d:
            checkout = os.path.join(d, "checkout")
            msg = self.not_found(checkout, d)
            built = os.path.join(checkout, "build", "lib", "libautotune-dispatch.so")
            for line in ("  $AUTOTUNE_DISPATCH_LIB: not set",
                         f"  the installed prefix: {d}/lib/libautotune-dispatch.so.0: no such file",
                         f"  the checkout it was built from: {built}: no such file",
                         "  /usr/local/lib: /usr/local/lib/libautotune-dispatch.so.0: no such file"):
                self.assertIn(line + "\n", msg)
            self.assertIn(f"`make lib` in {checkout} builds it", msg)
            self.assertIn("set $AUTOTUNE_DISPATCH_LIB to its path", msg)

    def test_no_make_lib_hint_for_a_library_that_exists(self):
        # it was found but does not load: building it again would not help
        with tempfile.TemporaryDirectory() as d:
            built = os.path.join(d, "build", "lib", "libautotune-dispatch.so")
            os.makedirs(os.path.dirname(built))
            with open(built, "wb") as f:
                f.write(b"not an ELF file")
            msg = self.not_found(d, d)
            self.assertIn(f"  the checkout it was built from: {built}: ", msg)
            self.assertNotIn(f"{built}: no such file", msg)
            self.assertNotIn("make lib", msg)
            self.assertIn(f"{built} exists but does not load", msg)
            self.assertIn("set $AUTOTUNE_DISPATCH_LIB to its path", msg)

    def test_a_file_that_is_not_a_library(self):
        with tempfile.NamedTemporaryFile(suffix=".so") as f:
            f.write(b"not an ELF file")
            f.flush()
            with self.assertRaises(errors.LibraryNotFound) as c:
                library.load({"AUTOTUNE_DISPATCH_LIB": f.name}, PACKAGE_DIR)
            self.assertIn(f"$AUTOTUNE_DISPATCH_LIB: {f.name}: ", str(c.exception))

    @needs_library
    def test_loads_from_the_variable(self):
        with tempfile.TemporaryDirectory() as d:
            copy = os.path.join(d, "libcopy.so")
            shutil.copy(BUILT_LIB, copy)
            so, where = library.load({"AUTOTUNE_DISPATCH_LIB": copy}, PACKAGE_DIR)
            self.assertEqual(where, copy)
            self.assertEqual(so.atd_version().decode(), autotune_dispatch.__version__)

    @needs_library
    def test_loads_from_the_installed_prefix(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "lib"))
            shutil.copy(BUILT_LIB, os.path.join(d, "lib", "libautotune-dispatch.so.0"))
            outside = os.path.join(d, "site-packages", "autotune_dispatch")
            _, where = library.load({}, outside, d)
            self.assertEqual(where, os.path.join(d, "lib", "libautotune-dispatch.so.0"))

    @needs_library
    def test_loads_from_the_checkout_it_was_built_from(self):
        outside = os.path.join("/nonexistent", "site-packages", "autotune_dispatch")
        _, where = library.load({}, outside, "/nonexistent", built_from=ROOT)
        self.assertEqual(where, BUILT_LIB)

    @needs_library
    def test_loads_from_the_checkout(self):
        _, where = library.load({}, PACKAGE_DIR, "/nonexistent")
        self.assertEqual(where, BUILT_LIB)


class Versions(unittest.TestCase):
    def header_version(self):
        return re.search(r'#define ATD_VERSION_STRING "([^"]+)"', header_text()).group(1)

    def test_the_package_is_the_headers_version(self):
        self.assertEqual(autotune_dispatch.__version__, self.header_version())
        major, minor, _ = self.header_version().split(".")
        self.assertEqual(library.ABI_VERSION, (int(major), int(minor)))

    def test_pyproject_has_no_version_of_its_own(self):
        # the build backend reads the header's (one place for the number)
        with open(os.path.join(ROOT, "python", "pyproject.toml"), encoding="utf-8") as f:
            text = f.read()
        self.assertIsNone(re.search(r"^version\s*=", text, re.M))
        self.assertIn('dynamic = ["version"]', text)

    def build(self, backend_root, kind, out):
        """Runs the build backend of backend_root (a python/ folder or an
        unpacked sdist): build_wheel or build_sdist into out; the file's path."""
        code = ("import sys\nsys.path.insert(0, sys.argv[1])\nimport autotune_build\n"
                f"print(autotune_build.build_{kind}(sys.argv[2]))\n")
        r = subprocess.run([sys.executable, "-c", code, os.path.join(backend_root, "build_backend"),
                            out], cwd=backend_root, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return os.path.join(out, r.stdout.strip())

    def wheel_says(self, wheel):
        """(Version of its METADATA, its _build_info's VERSION and CHECKOUT)."""
        with zipfile.ZipFile(wheel) as z:
            meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            version = re.search(r"^Version: (.*)$", z.read(meta).decode(), re.M).group(1)
            info = {}
            exec(z.read("autotune_dispatch/_build_info.py").decode(), info)
        return version, info["VERSION"], info["CHECKOUT"]

    def test_a_wheel_is_the_headers_version_and_names_its_checkout(self):
        with tempfile.TemporaryDirectory() as d:
            wheel = self.build(os.path.join(ROOT, "python"), "wheel", d)
            v = self.header_version()
            self.assertTrue(os.path.basename(wheel).startswith(f"autotune_dispatch-{v}-"), wheel)
            self.assertEqual(self.wheel_says(wheel), (v, v, ROOT))

    def test_a_wheel_from_an_sdist_keeps_the_version(self):
        # unpacked elsewhere, an sdist has no header beside it: its PKG-INFO
        # carries the version, and it names no checkout
        with tempfile.TemporaryDirectory() as d:
            sdist = self.build(os.path.join(ROOT, "python"), "sdist", d)
            with tarfile.open(sdist) as t:
                t.extractall(d)
            unpacked = sdist[:-len(".tar.gz")]
            wheel = self.build(unpacked, "wheel", d)
            v = self.header_version()
            self.assertEqual(self.wheel_says(wheel), (v, v, None))

    def test_the_cli_and_the_pc_file_say_the_headers_version(self):
        cli = os.path.join(ROOT, "build", "autotune")
        pc = os.path.join(ROOT, "build", "lib", "autotune-dispatch.pc")
        if not (os.path.exists(cli) and os.path.exists(pc)):
            self.skipTest("build/autotune or the .pc not built (make)")
        r = subprocess.run([cli, "version"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.stdout, f"autotune {self.header_version()}\n")
        with open(pc, encoding="utf-8") as f:
            self.assertIn(f"\nVersion: {self.header_version()}\n", f.read())

    def test_flags_and_dtypes_are_the_headers(self):
        text = header_text()
        for name in ("ATD_OPEN_FALLBACK", "ATD_OPEN_NO_JIT", "ATD_OPEN_JIT_BACKGROUND", "ATD_OPEN_TUNE", "ATD_OPEN_NO_DB"):
            value = int(re.search(rf"#define {name} (\d+)u", text).group(1))
            self.assertEqual(getattr(library, name), value, name)
        for name, value in (("F32", "f32"), ("F16", "f16"), ("BF16", "bf16")):
            code = int(re.search(rf"ATD_{name} = (\d+)", text).group(1))
            self.assertEqual(library.DTYPES[value], code)
        ops = {m.group(1).lower(): int(m.group(2))
               for m in re.finditer(r"\bATD_OP_(\w+) = (\d+)", text)}
        self.assertEqual(library.OPS, ops)

    def test_the_cross_entropy_options_are_the_headers_struct(self):
        o = library.CrossEntropyOpts
        # int64, three floats, two enums, a float, an unsigned: as C lays them out
        self.assertEqual([getattr(o, f).offset for f, _ in o._fields_], [0, 8, 12, 16, 20, 24, 28, 32])
        self.assertEqual(ctypes.sizeof(o), 40)
        text = header_text()
        self.assertIn("{ -100, 0.0f, 0.0f, 0.0f, ATD_REDUCTION_MEAN, ATD_INDEX_I64, 1.0f, 0u }", text)
        for name, code in library.REDUCTIONS.items():
            self.assertIn(f"ATD_REDUCTION_{name.upper()} = {code}", text)
        self.assertIn(f"#define ATD_TRUST_TARGETS {library.TRUST_TARGETS}u", text)

    @needs_library
    def test_cross_entropy_checks_its_options_through_ctypes(self):
        so = library.library()
        self.assertEqual(so.atd_cross_entropy_workspace_size(1000), 32 + 4000)
        h = ctypes.c_void_p()
        self.assertEqual(so.atd_open(b"/nonexistent/absent.db", library.ATD_OPEN_FALLBACK, ctypes.byref(h)), 0)
        buf = ctypes.create_string_buffer(4096)
        p = ctypes.addressof(buf)
        try:
            def call(**kw):
                o = library.CrossEntropyOpts(-100, 0.0, 0.0, 0.0, 2, 0, 1.0, 0)
                for k, v in kw.items():
                    setattr(o, k, v)
                return so.atd_cross_entropy(h, 0, p, 8, p + 1024, 4, 8, o, p + 2048, None, None, 8,
                                            p + 3072, None)
            self.assertEqual(call(label_smoothing=2.0), 1)
            self.assertIn(b"label_smoothing must be in [0, 1] (it is 2)", so.atd_errmsg(h))
            self.assertEqual(call(reduction=7), 1)
            self.assertIn(b"unknown reduction 7", so.atd_errmsg(h))
            # valid: past the checks, this machine stops at the driver or context
            self.assertIn(call(), (0, 2, 3))
        finally:
            so.atd_close(h)

    @needs_library
    def test_the_backward_calls_take_the_headers_arguments(self):
        so = library.library()
        for name in ("atd_softmax_backward", "atd_log_softmax_backward"):
            # handle, dtype, dx, y, dy, M, N, lddx, ldy, lddy, flags, stream
            self.assertEqual(len(getattr(so, name).argtypes), 12, name)
            self.assertIn(f"ATD_API atd_status {name}(", header_text())

    @needs_library
    def test_version_is_the_librarys(self):
        self.assertEqual(autotune_dispatch.version(), self.header_version())


class WithoutTorch(unittest.TestCase):
    """In a fresh interpreter where PyTorch cannot be imported (a folder on
    the path whose torch/__init__.py raises ImportError)."""

    def run_python(self, code):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "torch"))
            with open(os.path.join(d, "torch", "__init__.py"), "w") as f:
                f.write("raise ImportError('No module named torch (test)')\n")
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([d, os.path.join(ROOT, "python")]))
            return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                  text=True, timeout=60)

    def test_import_works_and_calls_say_what_is_missing(self):
        r = self.run_python(
            "import autotune_dispatch as a\n"
            "try:\n    a.softmax(None)\nexcept a.Unavailable as e:\n    print(e)\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "autotune_dispatch.softmax needs PyTorch, which cannot be imported "
                                   "here (ImportError: No module named torch (test))\n")


if __name__ == "__main__":
    unittest.main()
