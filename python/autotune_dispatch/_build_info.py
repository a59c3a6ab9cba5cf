"""What the build backend (build_backend/autotune_build.py) knew when it
built a wheel: it writes a wheel's copy of this file. The values here are
those of a package run from its checkout (PYTHONPATH=python, or an
editable install), which needs none of them.

CHECKOUT: the source checkout the wheel was built from (`pip install
./python`), or None; an installed package looks for that checkout's
build/lib (library.py), as a package run from its checkout looks beside
itself.

VERSION: the package's version, the header's ATD_VERSION_STRING at build
time; None here, where library.py reads the checkout's header.
"""
CHECKOUT = None
VERSION = None
