"""What the package's tests share: the source checkout's paths, and a skip
for tests that need the library built (make lib)."""
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(ROOT, "include", "autotune", "dispatch.h")
BUILT_LIB = os.path.join(ROOT, "build", "lib", "libautotune-dispatch.so")
EXAMPLE_DB = os.path.join(ROOT, "results", "example", "h100-default.db")
H100 = {"name": "NVIDIA H100 80GB HBM3", "cc": (9, 0), "sm_count": 132}


def needs_library(test):
    """Skips test when the library is not built (the Makefile's python-test
    builds it first, so there it always runs)."""
    return unittest.skipUnless(os.path.exists(BUILT_LIB), f"{BUILT_LIB} not built: make lib")(test)


def header_text():
    with open(HEADER, encoding="utf-8") as f:
        return f.read()


def run_tool(name, *argv):
    """tools/NAME run as a command from the checkout's root: its
    CompletedProcess, output captured as text."""
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools", name), *argv],
                          capture_output=True, text=True, cwd=ROOT)
