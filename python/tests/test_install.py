"""`pip install ./python` in a fresh virtual environment, with no network
(--no-index: the package's build backend needs nothing), then the package
used from outside the checkout: it imports without PyTorch or a GPU, looks
for the library in the environment's prefix, then in the checkout it was
built from (its build/lib, which the backend recorded), then in the
loader's path, and finds it through $AUTOTUNE_DISPATCH_LIB. Also the
editable install. Takes some seconds (the virtual environment's pip)."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from helpers import BUILT_LIB, ROOT, header_text, needs_library

PROBE = """
import importlib.metadata, json, autotune_dispatch as a
from autotune_dispatch import library
out = {"file": a.__file__, "candidates": library.candidates()}
out["package"] = [a.__version__, importlib.metadata.version("autotune-dispatch")]
try:
    out["version"] = a.version()
    out["library"] = a.library_path()
except a.LibraryNotFound as e:
    out["error"] = str(e)
print(json.dumps(out))
"""


class PipInstall(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.venv = os.path.join(cls.dir.name, "venv")
        r = subprocess.run([sys.executable, "-m", "venv", cls.venv], capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"python3 -m venv failed (Debian: apt-get install python3-venv): "
                                 f"{r.stderr}")
        cls.python = os.path.join(cls.venv, "bin", "python")

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def pip(self, *args):
        r = subprocess.run([self.python, "-m", "pip", "--disable-pip-version-check", *args],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def probe(self, **env):
        env = dict({k: v for k, v in os.environ.items()
                    if k not in ("PYTHONPATH", "AUTOTUNE_DISPATCH_LIB")}, **env)
        r = subprocess.run([self.python, "-c", PROBE], capture_output=True, text=True,
                           cwd=self.dir.name, env=env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    @needs_library
    def test_install_then_import_outside_the_checkout(self):
        self.pip("install", "--no-index", os.path.join(ROOT, "python"))
        got = self.probe()
        self.assertTrue(got["file"].startswith(self.venv), got["file"])
        self.assertEqual(got["candidates"][:2], [
            ["the installed prefix", os.path.join(self.venv, "lib", "libautotune-dispatch.so.0")],
            ["the checkout it was built from", BUILT_LIB]])
        # the checkout's library, found from outside it
        self.assertNotIn("error", got)
        self.assertEqual(got["library"], BUILT_LIB)
        self.assertEqual(got["version"], self.probe_header_version())
        # the package, its metadata and the library: the header's version
        self.assertEqual(got["package"], [got["version"]] * 2)
        got = self.probe(AUTOTUNE_DISPATCH_LIB=BUILT_LIB)
        self.assertEqual(got.get("version"), self.probe_header_version())
        # the editable install runs the checkout's files
        self.pip("uninstall", "-y", "autotune-dispatch")
        self.pip("install", "--no-index", "-e", os.path.join(ROOT, "python"))
        got = self.probe()
        self.assertEqual(got["file"], os.path.join(ROOT, "python", "autotune_dispatch", "__init__.py"))
        self.assertEqual(got["candidates"][0], ["the source checkout (make lib)", BUILT_LIB])

    def probe_header_version(self):
        return re.search(r'#define ATD_VERSION_STRING "([^"]+)"', header_text()).group(1)


if __name__ == "__main__":
    unittest.main()
