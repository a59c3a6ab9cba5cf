"""autotune_dispatch: the softmax kernels that `autotune sweep` found
fastest, called from Python and PyTorch.

    import torch, autotune_dispatch as atd
    y = atd.softmax(x)                  # x: a CUDA tensor, float32/float16/bfloat16
    atd.softmax(x, out=x)               # in place
    atd.query("bf16", 4096, 8192)       # which kernel serves that shape
    atd.version()                       # the library's version

A thin layer over libautotune-dispatch (include/autotune/dispatch.h),
called through ctypes; the library is found by $AUTOTUNE_DISPATCH_LIB, the
build/lib of the source checkout it sits in, the installed prefix, or the
build/lib of the checkout it was installed from (library.py), and the
tuning database by the library itself ($AUTOTUNE_DB, else autotune.db; with
none it serves its seed models' or seed winners' choice). PyTorch is optional: this
package imports without it, and without a GPU; the calls that need either
raise autotune_dispatch.Unavailable.

softmax is the custom op autotune_dispatch::softmax (with softmax_out and
softmax_ for out= and in place), so torch.compile keeps it in its graphs
and a CUDA graph can capture it. Before capturing, run it once outside the
capture for each dtype and shape the graph will use (the warm-up that
torch.cuda.graphs asks for anyway): the first call of a shape chooses its
kernel, may compile it (NVRTC) and loads it, none of which may happen
while a stream is being captured; the captured graph keeps that kernel.
"""
from .errors import (Error, InvalidArgument, NoDriver, NoContext, CudaError, DatabaseMissing,
                     DatabaseCorrupt, DatabaseNewer, OutOfHostMemory, NoKernel, KernelAltered, TargetError,
                     LibraryNotFound, Unavailable)
from .handle import Choice, DatabaseWarning, Handle
from . import library as _library
from . import torch_ops as _torch_ops
from . import cross_entropy as _cross_entropy
from .torch_ops import default_handle, set_default_handle

__version__ = _library.VERSION  # the library's, as the CLI's (tests/test_library.py)

__all__ = ["softmax", "log_softmax", "softmax_backward", "log_softmax_backward", "cross_entropy",
           "cross_entropy_lse", "query", "version", "library_path", "Handle", "Choice", "default_handle",
           "set_default_handle", "Error", "InvalidArgument", "NoDriver", "NoContext", "CudaError",
           "DatabaseMissing", "DatabaseCorrupt", "DatabaseNewer", "OutOfHostMemory", "NoKernel", "KernelAltered", "TargetError",
           "LibraryNotFound", "Unavailable", "DatabaseWarning"]


def softmax(x, dim=-1, out=None, masked_zero=False):
    """softmax of the CUDA tensor x along dim, as torch.softmax(x, dim).

    x: float32, float16 or bfloat16 on a CUDA device; any strides along the
    batch dimensions, the softmax dimension contiguous (otherwise x is
    copied to a contiguous tensor first; a dim other than the last costs
    that copy too). out: a tensor of x's shape, dtype and device to write
    into, or x itself for in place. Runs on the current stream; math in
    float32. Numerics as torch.softmax at every value (huge logits give a
    distribution; +inf or NaN in a row, NaN); a row of all -inf gives NaN,
    or zeros with masked_zero=True (as scaled_dot_product_attention gives
    fully masked rows). Raises TypeError (dtype), ValueError (device, out), IndexError
    (dim), Unavailable (no PyTorch), or an autotune_dispatch.Error subclass
    carrying the library's message (e.g. NoDriver, CudaError).
    """
    return _torch_ops.softmax(x, dim, out, masked_zero)


def log_softmax(x, dim=-1, out=None, masked_zero=False):
    """log_softmax of the CUDA tensor x along dim, as torch.log_softmax(x, dim).

    As softmax in dtypes, layouts, out= (x itself: in place), streams and
    errors, with autograd through the library's backward kernel
    (log_softmax_backward) and under torch.compile. Numerics as
    torch.log_softmax at every value: (x - max) - log(sum exp(x - max)),
    the difference first; -inf elements give -inf; +inf or NaN in a row,
    NaN; a row of all -inf gives NaN, or -inf with masked_zero=True.
    """
    return _torch_ops.log_softmax(x, dim, out, masked_zero)


def softmax_backward(y, dy, dim=-1, out=None):
    """The gradient of softmax's input, as PyTorch's autograd computes it:
    dx = y * (dy - sum(dy * y)) along dim, from y = softmax(x, dim) and dy,
    the gradient of the loss with respect to y (the library's backward
    kernel; C: atd_softmax_backward). y and dy: CUDA tensors of one shape
    and dtype (float32, float16, bfloat16). out: None (a new tensor), dy
    itself (dx written over dy, no new memory), or a tensor of y's shape.
    Math in float32; a custom op (torch.compile keeps it). Raises as
    softmax.
    """
    return _torch_ops.softmax_backward(y, dy, dim, out)


def log_softmax_backward(y, dy, dim=-1, out=None):
    """The gradient of log_softmax's input: dx = dy - exp(y) * sum(dy)
    along dim, from y = log_softmax(x, dim) and dy; as softmax_backward
    otherwise (C: atd_log_softmax_backward).
    """
    return _torch_ops.log_softmax_backward(y, dy, dim, out)


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean",
                  z_loss=0.0, softcap=None, inplace_backward=False, check_targets=True):
    """The cross-entropy loss of logits [..., V] (classes last; float32,
    float16, bfloat16 on a CUDA device) against target [...] (int64 or
    int32), as torch.nn.functional.cross_entropy(logits.reshape(-1, V),
    target.reshape(-1), ...) with its ignore_index, label_smoothing and
    reduction ("none": a float32 loss per row, "sum", "mean" over the rows
    whose target is not ignore_index; NaN with none). z_loss adds
    z_loss * lse^2 per row (lse: the row's log-sum-exp); softcap takes
    the logits through softcap * tanh(logits / softcap) first. The loss is
    float32, computed in float32 from the dtype's logits.

    With autograd the forward computes the gradient too (the logits are read
    once) and keeps it; inplace_backward=True keeps it in the logits' own
    memory (they are overwritten: Liger-Kernel's option). A target outside
    [0, V) that is not ignore_index raises TargetError (the call then waits
    for the GPU, except while a CUDA graph is captured, where its row is
    NaN). check_targets=False skips that wait (ATD_TRUST_TARGETS): such a
    row's loss is NaN, and the CPU runs ahead of the GPU as in a training
    loop it should. A custom op: torch.compile and CUDA graphs keep it, as
    softmax. C: atd_cross_entropy.
    """
    return _cross_entropy.cross_entropy_with_lse(logits, target, ignore_index, label_smoothing,
                                                 reduction, z_loss, softcap, inplace_backward,
                                                 check_targets)[0]


def cross_entropy_lse(logits, target, ignore_index=-100, label_smoothing=0.0, z_loss=0.0,
                      softcap=None):
    """(loss, lse) per row, as cross_entropy with reduction "none" (its
    options alike): lse is each row's log-sum-exp (float32, no gradient),
    -loss at label_smoothing = z_loss = 0 the target's log-probability (RL's
    log-probabilities), differentiable through loss."""
    return _cross_entropy.cross_entropy_with_lse(logits, target, ignore_index, label_smoothing,
                                                 "none", z_loss, softcap)


def query(dtype, M, N, gpu=None, op="softmax"):
    """What serves op ("softmax", "log_softmax", "softmax_backward" or
    "log_softmax_backward") of M rows of N elements of dtype ("f32", "f16",
    "bf16" or a torch dtype) through the default handle: a Choice (level,
    template, params, gpu, tuned_shape, tuned_us, from_params). gpu: None
    for the current CUDA device (needs a GPU), or a dict describing one,
    e.g. {"name": "NVIDIA H100 80GB HBM3", "cc": (9, 0)} (sm_count and
    mem_bytes, left out, are the database's GPU's of that name and cc)."""
    return default_handle().query(dtype, M, N, gpu, op)


def version():
    """The library's version string, e.g. "0.2.0" (loads the library)."""
    return _library.library().atd_version().decode()


def library_path():
    """Where the library was loaded from (loads it)."""
    return _library.library_path()
