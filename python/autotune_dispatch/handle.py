"""A handle on a tuning database (atd_open) and what it answers: which
kernel serves a shape (atd_query, atd_query_gpu). softmax over tensors is
in torch_ops.py; this part needs neither PyTorch nor a GPU until a call
does.

The database is found as the C library finds it, by the library itself:
no path means $AUTOTUNE_DB if set, else autotune.db in the working folder.
"""
from collections import namedtuple
import ctypes
import threading
import warnings

from . import errors
from . import library as lib

Choice = namedtuple("Choice", "level template params gpu tuned_shape tuned_us from_params")
Choice.__doc__ = """What serves a shape: level ("exact", "nearest",
"same-arch", "built-in", "derived", "tuned online", "predicted"), template and params
of the kernel, gpu (the GPU model it was tuned on; "" for the built-in
kernel), tuned_shape ((M, N) it was tuned at, None for the built-in),
tuned_us (its median time there, None for the built-in) and from_params
(for a derived kernel, the params of the winner it was derived from)."""

JIT_MODES = {"block": 0, "background": lib.ATD_OPEN_JIT_BACKGROUND, "off": lib.ATD_OPEN_NO_JIT}


class DatabaseWarning(UserWarning):
    """A handle opened with fallback=True found no usable database and
    serves without it (the message says why and what it serves)."""


def dtype_name(dtype):
    """The library's name ("f32", "f16", "bf16") of a dtype given as that
    name, as a torch dtype or as its name ("float32", "torch.bfloat16")."""
    text = str(dtype).replace("torch.", "")
    names = {"float32": "f32", "float": "f32", "float16": "f16", "half": "f16",
             "bfloat16": "bf16", "f32": "f32", "f16": "f16", "bf16": "bf16"}
    if text not in names:
        raise TypeError(f"dtype {dtype!r}: the library computes f32 (float32), f16 (float16) "
                        "and bf16 (bfloat16)")
    return names[text]


def _shape_arg(name, value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return value


def _text(b):
    return b.decode(errors="replace") if b else ""


class Handle:
    """An open tuning database.

    Handle(db=None, fallback=True, jit=None, tune=False, no_db=False)
      db:       the database's path; None: $AUTOTUNE_DB, else autotune.db
      fallback: a missing, corrupt or newer database is not an error: the
                handle serves as with no_db and warns (DatabaseWarning);
                False: such a database raises DatabaseMissing,
                DatabaseCorrupt or DatabaseNewer
      jit:      "block" (compile a derived kernel at its shape's first call),
                "background" (compile on a worker thread, serve meanwhile),
                "off" (never compile); None: the library's default ($ATD_JIT)
      tune:     online tuning of untuned shapes (ATD_OPEN_TUNE); with
                jit="background" a worker thread tunes and the shape is
                served meanwhile
      no_db:    open no database (db is ignored; ATD_OPEN_NO_DB): serve what
                the library carries, its seed models' choice on a GPU of
                their compute capability, else kernels derived from its
                seed winners (or the built-in kernel), without a warning
    Thread-safe, as the library is. Close it (or use `with`) before the CUDA
    contexts it ran in are destroyed.
    """

    def __init__(self, db=None, fallback=True, jit=None, tune=False, no_db=False):
        if jit is not None and jit not in JIT_MODES:
            raise ValueError(f"jit must be one of {', '.join(JIT_MODES)} or None, got {jit!r}")
        self._so = lib.library()
        flags = (lib.ATD_OPEN_FALLBACK if fallback else 0) | JIT_MODES.get(jit, 0) | \
            (lib.ATD_OPEN_TUNE if tune else 0) | (lib.ATD_OPEN_NO_DB if no_db else 0)
        h = ctypes.c_void_p()
        status = self._so.atd_open(None if db is None else str(db).encode(), flags, ctypes.byref(h))
        if status != 0:
            raise lib.fail(self._so, None, status)
        self._h = h
        self._lock = threading.Lock()
        self.db = None if no_db else db
        # with fallback, a database that could not be used leaves its reason;
        # any database, the shapes whose winner has no stored kernel
        self.warning = _text(self._so.atd_errmsg(h)) or None
        if self.warning:
            warnings.warn(self.warning, DatabaseWarning, stacklevel=2)

    def close(self):
        """Releases the handle and the kernels it loaded; twice is harmless."""
        with self._lock:
            h, self._h = self._h, None
        if h:
            self._so.atd_close(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_h", None):
            self.close()

    @property
    def pointer(self):
        """The atd_handle* for ctypes calls; Error once closed."""
        if not self._h:
            raise errors.Error("the handle is closed")
        return self._h

    def fail(self, status):
        """The exception for a failed call on this handle."""
        return lib.fail(self._so, self.pointer, status)

    def _choice(self, c):
        level = _text(self._so.atd_level_name(c.level))
        builtin = c.level == 4
        return Choice(level, _text(c.template_name), _text(c.params), _text(c.gpu_name),
                      None if builtin else (c.tuned_M, c.tuned_N),
                      None if builtin else c.tuned_us, _text(c.from_params))

    def query(self, dtype, M, N, gpu=None, op="softmax"):
        """What would serve op (a key of library.OPS: "softmax", ...) of M rows of N
        elements of dtype ("f32", "f16", "bf16" or a torch dtype).

        gpu None: the GPU of the current CUDA context (with PyTorch, the
        current device's; needs a GPU). gpu a dict describing one, e.g.
        {"name": "NVIDIA H100 80GB HBM3", "cc": (9, 0), "sm_count": 132,
        "mem_bytes": 85e9}: the choice for that GPU, with no GPU needed; a
        sm_count or mem_bytes left out is the database's GPU's of that name
        and cc (as `autotune show --gpu --cc`). Returns a Choice."""
        code = lib.DTYPES[dtype_name(dtype)]
        if op not in lib.OPS:
            raise ValueError(f"query: op must be one of {', '.join(lib.OPS)}, got {op!r}")
        M, N = _shape_arg("M", M), _shape_arg("N", N)
        out = lib.Choice()
        if gpu is not None:
            g = gpu_description(gpu)
            status = self._so.atd_query_op_gpu(self.pointer, lib.OPS[op], ctypes.byref(g), code, M, N,
                                               ctypes.byref(out))
        else:
            from . import torch_ops
            if torch_ops.torch is not None:  # without it, the library says what is missing
                torch_ops.make_context_current()
            status = self._so.atd_query_op(self.pointer, lib.OPS[op], code, M, N, ctypes.byref(out))
        if status != 0:
            raise self.fail(status)
        return self._choice(out)

    def softmax(self, x, dim=-1, out=None, masked_zero=False):
        """softmax(x, dim) through this handle, in eager mode (the module's
        softmax is the one that torch.compile and CUDA graphs see); see
        autotune_dispatch.softmax."""
        from . import torch_ops
        return torch_ops.softmax_eager(self, x, dim, out, masked_zero)


def gpu_description(gpu):
    """An atd_gpu from a dict with name, cc ((major, minor) or "9.0"),
    sm_count and mem_bytes (the last two optional: 0, which the library
    fills in from the database)."""
    if not isinstance(gpu, dict) or "name" not in gpu or "cc" not in gpu:
        raise TypeError("gpu must be a dict with at least \"name\" and \"cc\" (e.g. (9, 0))")
    cc = gpu["cc"]
    if isinstance(cc, str):
        major, _, minor = cc.partition(".")
        cc = (int(major), int(minor or 0))
    g = lib.Gpu()
    g.name = str(gpu["name"]).encode()  # ctypes keeps the bytes alive with the struct
    g.cc_major, g.cc_minor = int(cc[0]), int(cc[1])
    g.sm_count = int(gpu.get("sm_count", 0))
    g.mem_bytes = int(gpu.get("mem_bytes", 0))
    return g
