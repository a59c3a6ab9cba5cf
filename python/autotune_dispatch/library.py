"""Finding libautotune-dispatch and declaring its functions for ctypes.

The library is looked for, first found first used:
  1. $AUTOTUNE_DISPATCH_LIB, the path of the shared library (when set, it
     is the only place looked at: a wrong path is an error, not a reason to
     load some other copy);
  2. the source checkout this package sits in: build/lib/ beside python/
     (what `make lib` builds);
  3. the installed prefix: <sys.prefix>/lib (a virtual environment that
     `make install PREFIX=$VIRTUAL_ENV` filled);
  4. for a package installed from a checkout (`pip install ./python`), the
     build/lib of that checkout, which the build backend recorded
     (_build_info.CHECKOUT);
  5. the dynamic loader's own search by soname (LD_LIBRARY_PATH, the ld.so
     cache, /usr/lib...), then /usr/local/lib (make install's default
     PREFIX, which the loader's cache lacks until ldconfig runs).
When none loads, the message lists every place with why it failed, and
says what would help: `make lib` in a checkout that lacks the library,
$AUTOTUNE_DISPATCH_LIB naming it, or installing it.
Nothing here needs a GPU or PyTorch: the library loads libcuda itself, at
its first call that needs it.
"""
import ctypes
import os
import re
import sys
import threading

from . import _build_info, errors

LIB_ENV = "AUTOTUNE_DISPATCH_LIB"
LIB_NAME = "libautotune-dispatch.so"


def _version():
    """This package's version: the library's, one number for the CLI, the
    library, its .pc and this package (ATD_VERSION_STRING of
    include/autotune/dispatch.h), which the build backend wrote into a
    wheel, or, run from a checkout, read from its header."""
    if _build_info.VERSION:
        return _build_info.VERSION
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    header = os.path.join(root, "include", "autotune", "dispatch.h")
    try:
        with open(header, encoding="utf-8") as f:
            m = re.search(r'^#define ATD_VERSION_STRING "([^"]+)"', f.read(), re.M)
    except OSError:
        m = None
    if not m:
        raise ImportError(f"autotune_dispatch: no version: not built by its build backend "
                          f"(pip install), and no {header} beside it")
    return m.group(1)


VERSION = _version()
# The version of include/autotune/dispatch.h that this package speaks (the
# layout of atd_choice, the flags); tests/test_library.py checks the flags
# and the layout against the header.
ABI_VERSION = tuple(int(part) for part in VERSION.split(".")[:2])
SONAME = f"{LIB_NAME}.{ABI_VERSION[0]}"

ATD_OPEN_FALLBACK = 1
ATD_OPEN_NO_JIT = 2
ATD_OPEN_JIT_BACKGROUND = 4
ATD_OPEN_TUNE = 8
ATD_OPEN_NO_DB = 16

# atd_dtype by name
DTYPES = {"f32": 0, "f16": 1, "bf16": 2}
OPS = {"softmax": 0, "log_softmax": 1, "softmax_backward": 2, "log_softmax_backward": 3,
       "cross_entropy": 4}  # atd_op


class Choice(ctypes.Structure):
    """atd_choice."""
    _fields_ = [("level", ctypes.c_int), ("template_name", ctypes.c_char_p),
                ("params", ctypes.c_char_p), ("gpu_name", ctypes.c_char_p),
                ("tuned_M", ctypes.c_int64), ("tuned_N", ctypes.c_int64),
                ("tuned_us", ctypes.c_double), ("from_params", ctypes.c_char_p)]


class Gpu(ctypes.Structure):
    """atd_gpu."""
    _fields_ = [("name", ctypes.c_char_p), ("cc_major", ctypes.c_int), ("cc_minor", ctypes.c_int),
                ("sm_count", ctypes.c_int), ("mem_bytes", ctypes.c_int64)]


class CrossEntropyOpts(ctypes.Structure):
    """atd_cross_entropy_opts."""
    _fields_ = [("ignore_index", ctypes.c_int64), ("label_smoothing", ctypes.c_float),
                ("z_loss", ctypes.c_float), ("softcap", ctypes.c_float), ("reduction", ctypes.c_int),
                ("target_type", ctypes.c_int), ("upstream", ctypes.c_float), ("flags", ctypes.c_uint)]


REDUCTIONS = {"none": 0, "sum": 1, "mean": 2}  # atd_reduction
INDEX_TYPES = {"int64": 0, "int32": 1}  # atd_index_type
TRUST_TARGETS = 1  # ATD_TRUST_TARGETS

IN_CHECKOUT = "the source checkout (make lib)"
BUILT_FROM = "the checkout it was built from"


def checkout_library(package_dir):
    """build/lib/libautotune-dispatch.so of the checkout whose python/
    folder holds package_dir, or None if package_dir is not in one."""
    python_dir = os.path.dirname(os.path.abspath(package_dir))
    root = os.path.dirname(python_dir)
    if os.path.basename(python_dir) != "python" or \
            not os.path.isfile(os.path.join(root, "include", "autotune", "dispatch.h")):
        return None
    return built_library(root)


def built_library(checkout):
    """Where `make lib` in checkout puts the library."""
    return os.path.join(checkout, "build", "lib", LIB_NAME)


def candidates(environ=None, package_dir=None, prefix=None, built_from=None):
    """Where the library is looked for, in order: a list of (where, what to
    dlopen) pairs; `where` says it in words for messages. built_from: the
    checkout an installed package was built from (default: the one the
    build backend recorded, if any)."""
    environ = os.environ if environ is None else environ
    package_dir = package_dir or os.path.dirname(os.path.abspath(__file__))
    prefix = sys.prefix if prefix is None else prefix
    built_from = _build_info.CHECKOUT if built_from is None else built_from
    explicit = environ.get(LIB_ENV)
    if explicit:
        return [(f"${LIB_ENV}", explicit)]
    out = []
    local = checkout_library(package_dir)
    if local:
        out.append((IN_CHECKOUT, local))
    out.append(("the installed prefix", os.path.join(prefix, "lib", SONAME)))
    if built_from and built_library(built_from) != local:
        out.append((BUILT_FROM, built_library(built_from)))
    out.append(("the dynamic loader's search", SONAME))
    out.append(("/usr/local/lib", os.path.join("/usr/local/lib", SONAME)))
    return out


def _not_found(tried, missing_builds, broken, explicit):
    """The LibraryNotFound for a search that loaded nothing: every place
    tried, then what would help. missing_builds: the checkouts' library
    paths that do not exist (`make lib` there builds them); broken: files
    that exist but did not load (building them again would not help)."""
    lines = ["libautotune-dispatch not found; looked in:"]
    if not explicit:
        lines.append(f"  ${LIB_ENV}: not set")
    lines += tried
    if explicit:
        lines.append(f"${LIB_ENV} is the only place looked at when it is set: set it to the path "
                     f"of {LIB_NAME} (`make lib` in a source checkout builds build/lib/{LIB_NAME}), "
                     f"or unset it to search the checkout and the installed prefix.")
        return errors.LibraryNotFound("\n".join(lines))
    for path in broken:
        lines.append(f"{path} exists but does not load (why is above).")
    for path in missing_builds:
        checkout = os.path.dirname(os.path.dirname(os.path.dirname(path)))
        lines.append(f"`make lib` in {checkout} builds it there.")
    if not missing_builds and not broken:
        lines.append("Build it with `make lib` in a source checkout, or install it (make install).")
    lines.append(f"Where it is elsewhere, set ${LIB_ENV} to its path.")
    return errors.LibraryNotFound("\n".join(lines))


def _declare(so):
    c = ctypes
    so.atd_version.restype = c.c_char_p
    so.atd_version.argtypes = []
    so.atd_version_number.restype = c.c_int
    so.atd_version_number.argtypes = []
    so.atd_status_string.restype = c.c_char_p
    so.atd_status_string.argtypes = [c.c_int]
    so.atd_level_name.restype = c.c_char_p
    so.atd_level_name.argtypes = [c.c_int]
    so.atd_open.restype = c.c_int
    so.atd_open.argtypes = [c.c_char_p, c.c_uint, c.POINTER(c.c_void_p)]
    so.atd_close.restype = None
    so.atd_close.argtypes = [c.c_void_p]
    so.atd_errmsg.restype = c.c_char_p
    so.atd_errmsg.argtypes = [c.c_void_p]
    so.atd_softmax.restype = c.c_int
    so.atd_softmax.argtypes = [c.c_void_p, c.c_int, c.c_void_p, c.c_void_p, c.c_int64, c.c_int64,
                               c.c_int64, c.c_int64, c.c_void_p]
    so.atd_softmax_ex.restype = c.c_int
    so.atd_softmax_ex.argtypes = [c.c_void_p, c.c_int, c.c_void_p, c.c_void_p, c.c_int64, c.c_int64,
                                  c.c_int64, c.c_int64, c.c_uint, c.c_void_p]
    so.atd_log_softmax.restype = c.c_int
    so.atd_log_softmax.argtypes = so.atd_softmax_ex.argtypes
    so.atd_softmax_backward.restype = c.c_int
    so.atd_softmax_backward.argtypes = [c.c_void_p, c.c_int, c.c_void_p, c.c_void_p, c.c_void_p,
                                        c.c_int64, c.c_int64, c.c_int64, c.c_int64, c.c_int64,
                                        c.c_uint, c.c_void_p]
    so.atd_log_softmax_backward.restype = c.c_int
    so.atd_log_softmax_backward.argtypes = so.atd_softmax_backward.argtypes
    so.atd_cross_entropy_workspace_size.restype = c.c_size_t
    so.atd_cross_entropy_workspace_size.argtypes = [c.c_int64]
    so.atd_cross_entropy.restype = c.c_int
    so.atd_cross_entropy.argtypes = [c.c_void_p, c.c_int, c.c_void_p, c.c_int64, c.c_void_p, c.c_int64,
                                     c.c_int64, c.POINTER(CrossEntropyOpts), c.c_void_p, c.c_void_p,
                                     c.c_void_p, c.c_int64, c.c_void_p, c.c_void_p]
    so.atd_cross_entropy_scale.restype = c.c_int
    so.atd_cross_entropy_scale.argtypes = [c.c_void_p, c.c_int, c.c_void_p, c.c_int64, c.c_int64,
                                           c.c_int64, c.c_void_p, c.c_int, c.c_void_p]
    so.atd_query.restype = c.c_int
    so.atd_query.argtypes = [c.c_void_p, c.c_int, c.c_int64, c.c_int64, c.POINTER(Choice)]
    so.atd_query_op.restype = c.c_int
    so.atd_query_op.argtypes = [c.c_void_p, c.c_int, c.c_int, c.c_int64, c.c_int64, c.POINTER(Choice)]
    so.atd_query_op_gpu.restype = c.c_int
    so.atd_query_op_gpu.argtypes = [c.c_void_p, c.c_int, c.POINTER(Gpu), c.c_int, c.c_int64, c.c_int64,
                                    c.POINTER(Choice)]
    so.atd_query_gpu.restype = c.c_int
    so.atd_query_gpu.argtypes = [c.c_void_p, c.POINTER(Gpu), c.c_int, c.c_int64, c.c_int64,
                                 c.POINTER(Choice)]


def load(environ=None, package_dir=None, prefix=None, built_from=None):
    """Loads the first library found (see the module's text) and returns
    (ctypes.CDLL, the path or name it was loaded from). Raises
    LibraryNotFound listing every place tried and why each failed, or when
    the library is of another version than this package's."""
    tried, missing_builds, broken = [], [], []
    places = candidates(environ, package_dir, prefix, built_from)
    for where, what in places:
        if os.sep in what and not os.path.exists(what):
            tried.append(f"  {where}: {what}: no such file")
            if where in (IN_CHECKOUT, BUILT_FROM):
                missing_builds.append(what)
            continue
        try:
            so = ctypes.CDLL(what)
            _declare(so)
        except (OSError, AttributeError) as exc:
            tried.append(f"  {where}: {what}: {exc}")
            if os.sep in what:
                broken.append(what)
            continue
        number = so.atd_version_number()
        found = (number // 10000, number // 100 % 100)
        if found[0] != ABI_VERSION[0] or (found[0] == 0 and found[1] != ABI_VERSION[1]):
            raise errors.LibraryNotFound(
                f"{what} is libautotune-dispatch {so.atd_version().decode()}; this package speaks "
                f"{ABI_VERSION[0]}.{ABI_VERSION[1]}.x: install the package of the library's version")
        return so, what
    raise _not_found(tried, missing_builds, broken, places[0][0] == f"${LIB_ENV}")


_lock = threading.Lock()
_loaded = None


def library():
    """The process's library, loaded on first use; see load()."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = load()
        return _loaded[0]


def library_path():
    """Where the process's library was loaded from."""
    library()
    return _loaded[1]


def fail(so, handle, status):
    """The exception for status, with the handle's message (with handle
    None: why this thread's last atd_open failed)."""
    message = (so.atd_errmsg(handle) or b"").decode(errors="replace")
    if not message:
        message = so.atd_status_string(status).decode()
    return errors.from_status(status, message)
