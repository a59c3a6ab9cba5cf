"""Argument checks and launch plans for softmax over tensors, in plain
Python on shapes and strides (no PyTorch, no GPU), so that they are tested
without either (python/tests/test_layout.py).

The library computes y[i*ldy + j] = softmax_j x[i*ldx + j] over M rows of N
contiguous elements. A tensor's batch dimensions (all but the last) become
those rows when they collapse to one stride; dimensions that do not
collapse become a few launches, one per index of the outer ones (at most
MAX_LAUNCHES). Anything else (the last dimension not contiguous, rows that
overlap, more launches) is made contiguous first, and the result copied
back into the output.
"""
from collections import namedtuple
import math

# torch dtype names -> the library's
DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
MAX_LAUNCHES = 16

TensorInfo = namedtuple("TensorInfo", "dtype device shape strides")
TensorInfo.__doc__ = """What the checks need of a tensor: dtype name
("float32"), device ("cuda:0", "cpu"), shape and strides in elements."""

Plan = namedtuple("Plan", "M N ldx ldy outer")
Plan.__doc__ = """Launches of atd_softmax: M rows of N elements, row
strides ldx and ldy, and `outer`: a tuple of (count, x_step, y_step), the
dimensions over which the launch repeats, outermost first (empty: one
launch)."""


def info_of(tensor):
    """TensorInfo of a torch.Tensor."""
    return TensorInfo(str(tensor.dtype).replace("torch.", ""), str(tensor.device),
                      tuple(tensor.shape), tuple(tensor.stride()))


def normalize_dim(dim, ndim):
    """dim in [0, ndim) as PyTorch reads it (a 0-d tensor takes 0 or -1);
    IndexError otherwise, with PyTorch's wording."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"autotune_dispatch.softmax: dim must be an int, got {type(dim).__name__}")
    span = max(ndim, 1)
    if not -span <= dim < span:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-span}, {span - 1}], "
                         f"but got {dim})")
    return dim % span


def check(x, dim=-1, out=None, what="autotune_dispatch.softmax"):
    """Checks softmax's arguments (TensorInfo each; out may be None) and
    returns dim normalized. TypeError for a dtype the library has not,
    ValueError for a tensor not on a CUDA device or an out that does not
    match x, IndexError for dim."""
    if x.dtype not in DTYPES:
        raise TypeError(f"{what}: x is {x.dtype}; the library computes float32, float16 and bfloat16")
    if not x.device.startswith("cuda"):
        raise ValueError(f"{what}: x is on {x.device}; it must be a CUDA tensor")
    d = normalize_dim(dim, len(x.shape))
    if out is not None:
        if out.dtype != x.dtype:
            raise TypeError(f"{what}: out is {out.dtype} and x is {x.dtype}; they must match")
        if out.device != x.device:
            raise ValueError(f"{what}: out is on {out.device} and x on {x.device}; they must match")
        if tuple(out.shape) != tuple(x.shape):
            raise ValueError(f"{what}: out has shape {list(out.shape)} and x {list(x.shape)}; "
                             "they must match")
    return d


def check_grad(y, dy, dim=-1, what="autotune_dispatch.softmax_backward"):
    """Checks a backward op's arguments (TensorInfo each: the forward's
    output y and the gradient dy) and returns dim normalized: as check,
    with dy matching y in dtype, device and shape."""
    if y.dtype not in DTYPES:
        raise TypeError(f"{what}: y is {y.dtype}; the library computes float32, float16 and bfloat16")
    if not y.device.startswith("cuda"):
        raise ValueError(f"{what}: y is on {y.device}; it must be a CUDA tensor")
    d = normalize_dim(dim, len(y.shape))
    if dy.dtype != y.dtype:
        raise TypeError(f"{what}: dy is {dy.dtype} and y is {y.dtype}; they must match")
    if dy.device != y.device:
        raise ValueError(f"{what}: dy is on {dy.device} and y on {y.device}; they must match")
    if tuple(dy.shape) != tuple(y.shape):
        raise ValueError(f"{what}: dy has shape {list(dy.shape)} and y {list(y.shape)}; "
                         "they must match")
    return d


def rows(shape, strides):
    """(M, N, ld): the tensor as M rows of N contiguous elements ld apart,
    in one launch, or None when it is not (the caller makes it contiguous).
    For the backward ops, whose three tensors take one launch."""
    if not shape:
        return (1, 1, 1)
    p = plan(shape, strides, strides, max_launches=1)
    if p is None or p.outer:
        return None
    return (p.M, p.N, p.ldx)


CE_WHAT = "autotune_dispatch.cross_entropy"


def check_cross_entropy(logits, target, label_smoothing=0.0, reduction="mean", z_loss=0.0,
                        softcap=None, what=CE_WHAT):
    """Checks cross_entropy's arguments (TensorInfo of the logits [..., V]
    and of the targets [...], the options) and returns (M, V): the rows and
    the classes. TypeError for a dtype the library has not (targets: int64
    or int32), ValueError for a device, a shape or an option out of range."""
    if logits.dtype not in DTYPES:
        raise TypeError(f"{what}: logits are {logits.dtype}; the library computes float32, "
                        "float16 and bfloat16")
    if not logits.device.startswith("cuda"):
        raise ValueError(f"{what}: logits are on {logits.device}; they must be a CUDA tensor")
    if target.dtype not in ("int64", "int32"):
        raise TypeError(f"{what}: target is {target.dtype}; it must be int64 or int32")
    if target.device != logits.device:
        raise ValueError(f"{what}: target is on {target.device} and logits on {logits.device}")
    if len(logits.shape) < 1 or tuple(target.shape) != tuple(logits.shape[:-1]):
        raise ValueError(f"{what}: target has shape {list(target.shape)}; logits of shape "
                         f"{list(logits.shape)} need {list(logits.shape[:-1])} (classes last)")
    if reduction not in ("none", "sum", "mean"):
        raise ValueError(f"{what}: reduction must be 'none', 'sum' or 'mean', got {reduction!r}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{what}: label_smoothing must be in [0, 1], got {label_smoothing}")
    if not 0.0 <= z_loss < math.inf:
        raise ValueError(f"{what}: z_loss must be finite and at least 0, got {z_loss}")
    if softcap is not None and not 0.0 < softcap < math.inf:
        raise ValueError(f"{what}: softcap must be None or finite and positive, got {softcap}")
    V = logits.shape[-1]
    M = math.prod(logits.shape[:-1])
    if V < 1:
        raise ValueError(f"{what}: the logits have no classes (shape {list(logits.shape)})")
    return M, V


def non_overlapping(shape, strides):
    """Whether no two indices of the tensor address the same element (a
    sufficient test: dimensions by stride, each stride past the extent of
    the smaller ones)."""
    extent = 1
    for size, stride in sorted(((n, s) for n, s in zip(shape, strides) if n > 1),
                               key=lambda d: d[1]):
        if stride < extent:
            return False
        extent += stride * (size - 1)
    return True


def plan(shape, x_strides, y_strides, max_launches=MAX_LAUNCHES):
    """The launches for a softmax over the last dimension of a tensor of
    this shape from x's strides to y's, or None when they cannot be made
    directly: then the caller makes x contiguous (and y, through a
    temporary). Needs a non-empty tensor."""
    if not shape:  # a 0-d tensor: one row of one element
        return Plan(1, 1, 1, 1, ())
    N = shape[-1]
    if N > 1 and (x_strides[-1] != 1 or y_strides[-1] != 1):
        return None
    # batch dimensions, outermost first, without those of size 1
    dims = [(n, sx, sy) for n, sx, sy in zip(shape[:-1], x_strides[:-1], y_strides[:-1]) if n != 1]
    merged = []
    for n, sx, sy in dims:  # a dimension folds into the one before when both tensors allow it
        if merged and merged[-1][1] == sx * n and merged[-1][2] == sy * n:
            m, _, _ = merged.pop()
            merged.append((m * n, sx, sy))
        else:
            merged.append((n, sx, sy))
    if not merged:
        return Plan(1, N, N, N, ())
    M, ldx, ldy = merged[-1]
    if M > 1 and (ldx < N or ldy < N):
        return None
    outer = tuple(merged[:-1])
    if math.prod(n for n, _, _ in outer) > max_launches:
        return None
    return Plan(M, N, ldx, ldy, outer)


def launch_offsets(p):
    """The (x, y) element offsets of each launch of plan p, in order."""
    offsets = [(0, 0)]
    for count, sx, sy in p.outer:
        offsets = [(ox + i * sx, oy + i * sy) for ox, oy in offsets for i in range(count)]
    return offsets
