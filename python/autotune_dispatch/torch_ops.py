"""softmax over PyTorch tensors through the library, registered as custom
ops (torch.library) so that torch.compile and CUDA graph capture see one
opaque operation:

  autotune_dispatch::softmax(Tensor x) -> Tensor   over the last dimension,
                                                   into a new contiguous tensor
  autotune_dispatch::softmax_out(Tensor x, Tensor(a!) out) -> ()
  autotune_dispatch::softmax_(Tensor(a!) x) -> ()  in place

  autotune_dispatch::softmax_backward(Tensor y, Tensor dy) -> Tensor
  autotune_dispatch::softmax_backward_(Tensor y, Tensor(a!) dy) -> ()  dx over dy

and the same for log_softmax. Each has a fake implementation (shapes only,
and the same argument checks) for tracing; softmax and log_softmax have
autograd through the library's backward kernels (no PyTorch arithmetic),
so they train, under torch.compile too. Eager calls on plain tensors skip
the ops and launch directly (_eager: the ops' Python layers cost the host
more than a small shape's kernel), through a torch.autograd.Function where
a gradient is recorded.
The ops run on the current stream of the tensor's device, through the
default handle (default_handle(): $AUTOTUNE_DB or autotune.db, with
fallback). PyTorch is optional: without it this module imports, and every
call raises errors.Unavailable.
"""
import threading

from . import errors
from . import layout
from . import library as lib
from .handle import Handle

try:
    import torch
    _missing = None
except Exception as exc:  # not installed, or installed but unable to load
    torch = None
    _missing = f"{type(exc).__name__}: {exc}"

_default = None
_default_lock = threading.Lock()

# What a call's checks and launch plan depend on (shapes, strides, dtypes,
# devices), computed once and looked up after: the host path of a call is
# what small shapes cost (a kernel of 5-10 us behind 30-50 us of Python).
_CACHE_CAP = 4096
_plans = {}
_checks = {}
_layouts = {}
_codes = {}
_raw_stream = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)
_current_dispatch_mode = (getattr(getattr(getattr(torch, "utils", None), "_python_dispatch", None),
                                  "_get_current_dispatch_mode", None) or (lambda: None))
# a direct write into a caller's tensor bumps its version as the ops'
# mutation does, so autograd still catches a saved tensor changed in place
_increment_version = getattr(getattr(getattr(torch, "autograd", None), "graph", None),
                             "increment_version", None)


def _eager(*tensors):
    """True where the custom ops can be skipped for a direct launch: plain
    tensors (None: an absent out), no compile or dispatch mode (fake
    tensors, make_fx) tracing. Each custom op costs the host ~100-200 us a
    call in PyTorch's Python (its alias checks, autograd and ADInplaceOrView
    layers: cProfile, results/h200/ce-host-profile-h200.log); the ops are
    there for tracing."""
    return (not _is_compiling() and _current_dispatch_mode() is None
            and all(t is None or type(t) is torch.Tensor for t in tensors))


def _records_grad(*tensors):
    """Whether autograd would record a call on tensors (None: absent)."""
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def _direct(out, *tensors):
    """A call that launches directly: eager, nothing for autograd to
    record, and an out written only where its version can be bumped."""
    return (_eager(out, *tensors) and not _records_grad(out, *tensors)
            and (out is None or _increment_version is not None))


def _recall(cache, key):
    """cache[key], or None: also for a key that cannot be hashed (symbolic
    sizes while torch.compile traces), which is then never remembered."""
    try:
        return cache.get(key)
    except TypeError:
        return None


def _remember(cache, key, value):
    try:
        if len(cache) >= _CACHE_CAP:
            cache.clear()
        cache[key] = value
    except TypeError:
        pass
    return value


def require_torch(what):
    if torch is None:
        raise errors.Unavailable(f"{what} needs PyTorch, which cannot be imported here ({_missing})")


def default_handle():
    """The handle the custom ops use, opened on first use: Handle()."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Handle()
        return _default


def set_default_handle(handle):
    """Makes the custom ops (and autotune_dispatch.softmax) use handle from
    now on; returns the one used before (None if none was open yet). Set it
    before torch.compile or CUDA graph capture: a captured graph keeps the
    kernels its capture launched."""
    global _default
    if not isinstance(handle, Handle):
        raise TypeError("set_default_handle needs an autotune_dispatch.Handle")
    with _default_lock:
        old, _default = _default, handle
    return old


def make_context_current(device=None):
    """Makes the primary CUDA context of device (default: PyTorch's current
    device) current on this thread, as the library needs: a thread that has
    not called the CUDA runtime yet has none."""
    require_torch("a CUDA call")
    if not torch.cuda.is_available():
        raise errors.Unavailable("no CUDA GPU is available to PyTorch (torch.cuda.is_available() "
                                 "is False)")
    dev = torch.device("cuda", torch.cuda.current_device()) if device is None else device
    torch.cuda.default_stream(dev).query()  # a runtime call binds the context to the thread


def _layout_facts(t):
    """(whether t's elements are distinct, its extent in elements), cached
    by shape and strides."""
    key = (t.shape, t.stride())
    hit = _recall(_layouts, key)
    if hit is None:
        extent = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()) if n > 0)
        hit = _remember(_layouts, key, (layout.non_overlapping(tuple(t.shape), tuple(t.stride())),
                                        extent))
    return hit


def _check_out(x, out, what):
    """out must not overlap itself, nor x unless it is x (same memory and
    strides: in place)."""
    distinct, out_extent = _layout_facts(out)
    if not distinct:
        raise ValueError(f"{what}: out has elements that share memory (an expanded or "
                         "overlapping view); write into a tensor of distinct elements")
    if out.numel() == 0 or x.numel() == 0:
        return
    size = x.element_size()
    a, c = x.data_ptr(), out.data_ptr()
    b, d = a + _layout_facts(x)[1] * size, c + out_extent * size
    if not _same_elements(x, out) and a < d and c < b:
        raise ValueError(f"{what}: out overlaps x without being x; pass out=x for in place")


def _same_elements(a, b):
    """Whether tensors a and b (same shape and dtype) address the same
    elements in the same order."""
    return a.data_ptr() == b.data_ptr() and tuple(a.stride()) == tuple(b.stride())


def _plan_of(x, y):
    """layout.plan and its launch offsets for x -> y, cached by shape and strides."""
    key = (x.shape, x.stride(), y.stride())
    hit = _recall(_plans, key)
    if hit is None:
        p = layout.plan(tuple(x.shape), tuple(x.stride()), tuple(y.stride()))
        hit = _remember(_plans, key, (p, layout.launch_offsets(p) if p is not None else None))
    return hit


def _current_stream(index):
    if _raw_stream is not None:
        return _raw_stream(index)
    return torch.cuda.current_stream(index).cuda_stream


MASKED_ZERO = 1  # ATD_MASKED_ZERO: a row of all -inf gives zeros, not NaN


def _launch(handle, x, y, flags=0, log=False):
    """y = softmax(x) (log: log_softmax(x)) over the last dimension (same
    shape, dtype and device; y may be x), on the current stream of x's
    device; flags: MASKED_ZERO or 0."""
    if x.numel() == 0:
        return
    p, offsets = _plan_of(x, y)
    xs, ys = x, y
    if p is None:  # through contiguous copies, one launch
        xs = x.contiguous()
        ys = y if y.is_contiguous() and y is not x else torch.empty(x.shape, dtype=x.dtype,
                                                                     device=x.device)
        p, offsets = _plan_of(xs, ys)
    code = _dtype_code(x)
    size = x.element_size()
    so, h = handle._so, handle.pointer
    call = so.atd_log_softmax if log else so.atd_softmax_ex
    index, stream = _device_stream(x)
    xp, yp = xs.data_ptr(), ys.data_ptr()
    for ox, oy in offsets:
        _call(handle, x.device, index, call,
              (h, code, yp + oy * size, xp + ox * size, p.M, p.N, p.ldy, p.ldx, flags, stream))
    if ys is not y:
        y.copy_(ys)


def _dtype_code(t):
    code = _recall(_codes, t.dtype)
    if code is None:
        code = _remember(_codes, t.dtype, lib.DTYPES[layout.DTYPES[str(t.dtype).replace("torch.", "")]])
    return code


def _device_stream(t):
    """t's device index and the raw current stream there."""
    index = t.device.index if t.device.index is not None else torch.cuda.current_device()
    return index, _current_stream(index)


def _call(handle, device, index, call, args):
    """call(*args) on device index (current there), making the context
    current first where this thread had none; raises the library's error."""
    if index != torch.cuda.current_device():
        with torch.cuda.device(index):
            status = call(*args)
    else:
        status = call(*args)
    if status == errors.NoContext.status:  # this thread had not touched CUDA yet
        make_context_current(device)
        with torch.cuda.device(index):
            status = call(*args)
    if status != 0:
        raise handle.fail(status)


def _rows_of(t):
    """layout.rows of t, cached by shape and strides."""
    key = ("rows", t.shape, t.stride())
    hit = _recall(_plans, key)
    if hit is None:
        hit = _remember(_plans, key, layout.rows(tuple(t.shape), tuple(t.stride())) or False)
    return hit or None


def _launch_grad(handle, y, dy, dx, log=False):
    """dx = the backward of softmax (log: log_softmax) from its output y and
    the gradient dy, over the last dimension (same shape, dtype and device);
    dx may be dy (in place). One launch: a tensor whose rows do not take one
    stride goes through a contiguous copy."""
    if y.numel() == 0:
        return
    ys = y if _rows_of(y) else y.contiguous()
    gs = dy if _rows_of(dy) else dy.contiguous()
    if dx is dy:
        ds = gs
    else:
        ds = dx if _rows_of(dx) else torch.empty(y.shape, dtype=y.dtype, device=y.device)
    (M, N, ldy), (_, _, lddy), (_, _, lddx) = _rows_of(ys), _rows_of(gs), _rows_of(ds)
    so = handle._so
    call = so.atd_log_softmax_backward if log else so.atd_softmax_backward
    index, stream = _device_stream(y)
    _call(handle, y.device, index, call,
          (handle.pointer, _dtype_code(y), ds.data_ptr(), ys.data_ptr(), gs.data_ptr(), M, N,
           lddx, ldy, lddy, 0, stream))
    if ds is not dx:
        dx.copy_(ds)


def _check_apart(y, dy, what):
    """dx written over dy: dy's elements distinct, and y not among them."""
    distinct, extent = _layout_facts(dy)
    if not distinct:
        raise ValueError(f"{what}: dy has elements that share memory (an expanded or "
                         "overlapping view); it cannot take the gradient in place")
    if y.numel() == 0:
        return
    size = y.element_size()
    a, c = y.data_ptr(), dy.data_ptr()
    if a < c + extent * size and c < a + _layout_facts(y)[1] * size:
        raise ValueError(f"{what}: y overlaps dy, which the gradient is written over")


def _check_grad(y, dy, what, dim=-1):
    """layout.check_grad of y and dy: dim normalized, or an error; cached
    as _check is."""
    if not isinstance(y, torch.Tensor) or not isinstance(dy, torch.Tensor):
        raise TypeError(f"{what}: y and dy must be torch.Tensor")
    key = ("grad", y.dtype, y.device, y.shape, dim, what, dy.dtype, dy.device, dy.shape)
    d = _recall(_checks, key)
    if d is None:
        d = layout.check_grad(layout.info_of(y), layout.info_of(dy), dim, what)
        _remember(_checks, key, d)
    return d


def _check(x, out=None, what="autotune_dispatch.softmax", dim=-1):
    """layout.check of x (and out) for dim: dim normalized, or an error;
    an outcome that passed is remembered by what it depends on."""
    if not isinstance(x, torch.Tensor) or (out is not None and not isinstance(out, torch.Tensor)):
        raise TypeError(f"{what}: x{' and out' if out is not None else ''} must be torch.Tensor")
    key = (x.dtype, x.device, x.shape, dim, what) if out is None else \
        (x.dtype, x.device, x.shape, dim, what, out.dtype, out.device, out.shape)
    d = _recall(_checks, key)
    if d is None:
        d = layout.check(layout.info_of(x), dim, None if out is None else layout.info_of(out), what)
        _remember(_checks, key, d)
    return d


def softmax_eager(handle, x, dim=-1, out=None, masked_zero=False):
    """softmax(x, dim, out) through handle, without the custom ops."""
    require_torch("softmax")
    return _forward_direct(handle, x, dim, out, masked_zero, False, "autotune_dispatch.softmax")


def _forward_direct(handle, x, dim, out, masked_zero, log, what):
    """softmax (log: log_softmax) of x along dim into out (None: a new
    tensor; x: in place) through handle, launched directly."""
    _check(x, out, what=what)
    d = _check(x, what=what, dim=dim)
    flags = MASKED_ZERO if masked_zero else 0
    if d != max(x.dim(), 1) - 1:
        x_last = x.movedim(d, -1)
        y = torch.empty(x_last.shape, dtype=x.dtype, device=x.device)
        _launch(handle, x_last, y, flags, log)
        y = y.movedim(-1, d)
        if out is None:
            return y
        out.copy_(y)
        return out
    if out is None:
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        _launch(handle, x, y, flags, log)
        return y
    if out is not x:
        _check_out(x, out, what)
    _launch(handle, x, out, flags, log)
    if _increment_version is not None:
        _increment_version(out)
    return out


_registered = False
if torch is not None and hasattr(getattr(torch, "library", None), "custom_op"):
    if hasattr(torch.ops.autotune_dispatch, "softmax"):  # a second import of this module
        _registered = True
    else:
        @torch.library.custom_op("autotune_dispatch::softmax", mutates_args=())
        def _softmax_op(x: torch.Tensor, masked_zero: bool = False) -> torch.Tensor:
            _check(x)
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            _launch(default_handle(), x, y, MASKED_ZERO if masked_zero else 0)
            return y

        @_softmax_op.register_fake
        def _(x, masked_zero=False):
            _check(x)
            return torch.empty(x.shape, dtype=x.dtype, device=x.device)

        def _setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        def _backward(ctx, grad):
            # a new tensor, never over grad: autograd may hand the same
            # gradient to other consumers (both inputs of an add)
            (y,) = ctx.saved_tensors
            return torch.ops.autotune_dispatch.softmax_backward(y, grad), None

        _softmax_op.register_autograd(_backward, setup_context=_setup_context)

        @torch.library.custom_op("autotune_dispatch::softmax_out", mutates_args=("out",))
        def _softmax_out_op(x: torch.Tensor, out: torch.Tensor, masked_zero: bool = False) -> None:
            _check(x, out)
            _check_out(x, out, "autotune_dispatch.softmax")
            _launch(default_handle(), x, out, MASKED_ZERO if masked_zero else 0)

        @_softmax_out_op.register_fake
        def _(x, out, masked_zero=False):
            _check(x, out)

        @torch.library.custom_op("autotune_dispatch::softmax_", mutates_args=("x",))
        def _softmax_inplace_op(x: torch.Tensor, masked_zero: bool = False) -> None:
            _check(x)
            _launch(default_handle(), x, x, MASKED_ZERO if masked_zero else 0)

        @_softmax_inplace_op.register_fake
        def _(x, masked_zero=False):
            _check(x)

        @torch.library.custom_op("autotune_dispatch::log_softmax", mutates_args=())
        def _log_softmax_op(x: torch.Tensor, masked_zero: bool = False) -> torch.Tensor:
            _check(x, what="autotune_dispatch.log_softmax")
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            _launch(default_handle(), x, y, MASKED_ZERO if masked_zero else 0, log=True)
            return y

        @_log_softmax_op.register_fake
        def _(x, masked_zero=False):
            _check(x, what="autotune_dispatch.log_softmax")
            return torch.empty(x.shape, dtype=x.dtype, device=x.device)

        def _log_backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return torch.ops.autotune_dispatch.log_softmax_backward(y, grad), None

        _log_softmax_op.register_autograd(_log_backward, setup_context=_setup_context)

        @torch.library.custom_op("autotune_dispatch::log_softmax_out", mutates_args=("out",))
        def _log_softmax_out_op(x: torch.Tensor, out: torch.Tensor, masked_zero: bool = False) -> None:
            _check(x, out, what="autotune_dispatch.log_softmax")
            _check_out(x, out, "autotune_dispatch.log_softmax")
            _launch(default_handle(), x, out, MASKED_ZERO if masked_zero else 0, log=True)

        @_log_softmax_out_op.register_fake
        def _(x, out, masked_zero=False):
            _check(x, out, what="autotune_dispatch.log_softmax")

        @torch.library.custom_op("autotune_dispatch::log_softmax_", mutates_args=("x",))
        def _log_softmax_inplace_op(x: torch.Tensor, masked_zero: bool = False) -> None:
            _check(x, what="autotune_dispatch.log_softmax")
            _launch(default_handle(), x, x, MASKED_ZERO if masked_zero else 0, log=True)

        @_log_softmax_inplace_op.register_fake
        def _(x, masked_zero=False):
            _check(x, what="autotune_dispatch.log_softmax")

        def _register_backward(name, log):
            what = f"autotune_dispatch.{name}"

            @torch.library.custom_op(f"autotune_dispatch::{name}", mutates_args=())
            def _op(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
                _check_grad(y, dy, what)
                dx = torch.empty(y.shape, dtype=y.dtype, device=y.device)
                _launch_grad(default_handle(), y, dy, dx, log)
                return dx

            @_op.register_fake
            def _(y, dy):
                _check_grad(y, dy, what)
                return torch.empty(y.shape, dtype=y.dtype, device=y.device)

            @torch.library.custom_op(f"autotune_dispatch::{name}_", mutates_args=("dy",))
            def _inplace_op(y: torch.Tensor, dy: torch.Tensor) -> None:
                _check_grad(y, dy, what)
                _check_apart(y, dy, what)
                _launch_grad(default_handle(), y, dy, dy, log)

            @_inplace_op.register_fake
            def _(y, dy):
                _check_grad(y, dy, what)

        _register_backward("softmax_backward", False)
        _register_backward("log_softmax_backward", True)

        _registered = True

if torch is not None:
    class _RowsFunction(torch.autograd.Function):
        """softmax or log_softmax launched directly with its gradient
        recorded: eager calls, where the custom ops' autograd would cost the
        host more than the kernels; the backward launches the library's
        backward kernel directly too."""
        @staticmethod
        def forward(ctx, x, dim, masked_zero, log, what):
            y = _forward_direct(default_handle(), x, dim, None, masked_zero, log, what)
            ctx.save_for_backward(y)
            ctx.dim, ctx.log = dim, log
            return y

        @staticmethod
        def backward(ctx, dy):
            # a new tensor, never over dy: autograd may hand the same
            # gradient to other consumers (both inputs of an add)
            (y,) = ctx.saved_tensors
            name = "log_softmax_backward" if ctx.log else "softmax_backward"
            return _backward_of(name, y, dy, ctx.dim, None), None, None, None, None


def _rows_op(name, x, dim, out, masked_zero):
    """softmax or log_softmax (name) of x along dim into out: launched
    directly where eager (through _RowsFunction where autograd records it),
    through the custom ops where traced, or on a PyTorch without them."""
    what = f"autotune_dispatch.{name}"
    log = name == "log_softmax"
    masked_zero = bool(masked_zero)
    if not _registered or _direct(out, x):  # before 2.4: no custom ops, no autograd
        return _forward_direct(default_handle(), x, dim, out, masked_zero, log, what)
    if out is None and _eager(x):
        return _RowsFunction.apply(x, dim, masked_zero, log, what)
    return _through_ops(name, x, dim, out, masked_zero, what)


def log_softmax(x, dim=-1, out=None, masked_zero=False):
    """log_softmax of x along dim (see autotune_dispatch.log_softmax)."""
    require_torch("autotune_dispatch.log_softmax")
    return _rows_op("log_softmax", x, dim, out, masked_zero)


def _through_ops(name, x, dim, out, masked_zero, what):
    """The custom ops named name (name, name_ in place, name_out) over x's
    dim into out (None: a new tensor); x itself or a view of its very
    elements as out is in place."""
    if not _is_compiling():  # when tracing, the ops' fake implementations check
        _check(x, out, what=what)
    d = layout.normalize_dim(dim, x.dim())
    ops = torch.ops.autotune_dispatch
    if d != max(x.dim(), 1) - 1:
        y = getattr(ops, name)(x.movedim(d, -1), masked_zero).movedim(-1, d)
        if out is None:
            return y
        out.copy_(y)
        return out
    if out is None:
        return getattr(ops, name)(x, masked_zero)
    # out=x, or another view of x's very elements (two x.t() calls): in place
    if out is x or (not _is_compiling() and _same_elements(x, out)):
        getattr(ops, name + "_")(out, masked_zero)
    else:
        getattr(ops, name + "_out")(x, out, masked_zero)
    return out


def softmax(x, dim=-1, out=None, masked_zero=False):
    """softmax of x along dim, computed by the kernel the tuning database
    chose for this GPU, dtype and shape (see autotune_dispatch.softmax)."""
    require_torch("autotune_dispatch.softmax")
    return _rows_op("softmax", x, dim, out, masked_zero)


def _backward_of(name, y, dy, dim, out):
    """The backward op name over y's and dy's dim: a new tensor, or into
    out (dy itself: in place, dy's memory reused)."""
    what = f"autotune_dispatch.{name}"
    require_torch(what)
    log = name.startswith("log_")
    if not _is_compiling():
        _check_grad(y, dy, what, dim)
        if out is not None and out is not dy:
            _check(y, out, what=what)
    d = layout.normalize_dim(dim, y.dim())
    last = d == max(y.dim(), 1) - 1
    if not _registered or _direct(out, y, dy):  # eager, or a PyTorch before 2.4
        if out is dy:
            _check_apart(y, dy, what)
        y_last, dy_last = y.movedim(d, -1), dy.movedim(d, -1)
        target = dy_last if out is dy else torch.empty(y_last.shape, dtype=y.dtype, device=y.device)
        _launch_grad(default_handle(), y_last, dy_last, target, log)
        if out is dy:
            if _increment_version is not None:
                _increment_version(dy)
            return dy
        dx = target.movedim(-1, d)
        return dx if out is None else out.copy_(dx)
    ops = torch.ops.autotune_dispatch
    if out is dy and last:
        getattr(ops, name + "_")(y, dy)
        return dy
    dx = getattr(ops, name)(y.movedim(d, -1), dy.movedim(d, -1)).movedim(-1, d)
    return dx if out is None else out.copy_(dx)


def softmax_backward(y, dy, dim=-1, out=None):
    """The gradient of softmax's input from its output y and dy (see
    autotune_dispatch.softmax_backward)."""
    return _backward_of("softmax_backward", y, dy, dim, out)


def log_softmax_backward(y, dy, dim=-1, out=None):
    """The gradient of log_softmax's input from its output y and dy (see
    autotune_dispatch.log_softmax_backward)."""
    return _backward_of("log_softmax_backward", y, dy, dim, out)
