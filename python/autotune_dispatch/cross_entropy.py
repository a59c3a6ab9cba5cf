"""cross_entropy over PyTorch tensors through the library (C:
atd_cross_entropy; docs/cross-entropy.md is the contract), as custom ops
(torch.library) so that torch.compile and CUDA graph capture see one
opaque operation each:

  autotune_dispatch::cross_entropy(Tensor logits, Tensor target, ...) -> (loss, lse, grad)
  autotune_dispatch::cross_entropy_(Tensor(a!) logits, Tensor target, ...) -> (loss, lse)
      the gradient written over the logits
  autotune_dispatch::cross_entropy_scale_(Tensor(a!) grad, Tensor g, bool per_row)
      the backward's multiply by the loss's gradient

Eager calls on plain tensors skip the ops and launch directly: the ops'
Python layers cost the host more than the launches (torch_ops._eager).

Logits [M, V] (classes last), targets [M] (int64 or int32). With grad
enabled the forward computes the gradient too (upstream 1) and keeps it;
the backward returns it multiplied by grad_output by a kernel that reads
grad_output on the GPU and leaves rows whose factor is 1 alone (Liger-
Kernel asks the GPU whether it is 1 and waits for the answer; this never
waits). The autograd is a torch.autograd.Function around the ops, which
torch.compile traces. A backward run twice (retain_graph) scales the kept
gradient twice, as Liger's does.
"""
from . import layout
from . import library as lib
from . import torch_ops as ops

torch = ops.torch
WHAT = layout.CE_WHAT


def _launch(handle, logits, target, loss, lse, grad, ignore_index, label_smoothing, z_loss,
            softcap, reduction, check_targets, upstream=1.0):
    """atd_cross_entropy over logits [M, V] (rows of one stride) into loss,
    lse and grad (None: the forward alone; logits itself: in place);
    without check_targets, ATD_TRUST_TARGETS (no stream sync: a bad
    target's row is NaN)."""
    M, V, ld = layout.rows(tuple(logits.shape), tuple(logits.stride()))
    ldd = layout.rows(tuple(grad.shape), tuple(grad.stride()))[2] if grad is not None else V
    so = handle._so
    o = lib.CrossEntropyOpts(int(ignore_index), float(label_smoothing), float(z_loss),
                             float(softcap or 0.0), lib.REDUCTIONS[reduction],
                             lib.INDEX_TYPES[str(target.dtype).replace("torch.", "")],
                             float(upstream), 0 if check_targets else lib.TRUST_TARGETS)
    ws = torch.empty(so.atd_cross_entropy_workspace_size(M), dtype=torch.uint8,
                     device=logits.device)
    index, stream = ops._device_stream(logits)
    ops._call(handle, logits.device, index, so.atd_cross_entropy,
              (handle.pointer, ops._dtype_code(logits), logits.data_ptr(), ld, target.data_ptr(),
               M, V, o, loss.data_ptr(), lse.data_ptr(),
               grad.data_ptr() if grad is not None else None, ldd, ws.data_ptr(), stream))


def _scale(handle, grad, g, per_row):
    """atd_cross_entropy_scale: grad's rows times g (g[0], or g[row] with
    per_row) read on the GPU, rows whose factor is 1 untouched."""
    M, V, ld = layout.rows(tuple(grad.shape), tuple(grad.stride()))
    index, stream = ops._device_stream(grad)
    ops._call(handle, grad.device, index, handle._so.atd_cross_entropy_scale,
              (handle.pointer, ops._dtype_code(grad), grad.data_ptr(), ld, M, V, g.data_ptr(),
               int(per_row), stream))


def _outputs(logits, reduction):
    M = logits.shape[0]
    loss = torch.empty((M,) if reduction == "none" else (), dtype=torch.float32, device=logits.device)
    return loss, torch.empty((M,), dtype=torch.float32, device=logits.device)


def _check(logits, target, label_smoothing, reduction, z_loss, softcap):
    if not isinstance(logits, torch.Tensor) or not isinstance(target, torch.Tensor):
        raise TypeError(f"{WHAT}: logits and target must be torch.Tensor")
    return layout.check_cross_entropy(layout.info_of(logits), layout.info_of(target),
                                      label_smoothing, reduction, z_loss, softcap)


_registered = False
if torch is not None and hasattr(getattr(torch, "library", None), "custom_op"):
    if hasattr(torch.ops.autotune_dispatch, "cross_entropy"):  # a second import
        _registered = True
    else:
        @torch.library.custom_op("autotune_dispatch::cross_entropy", mutates_args=())
        def _ce_op(logits: torch.Tensor, target: torch.Tensor, ignore_index: int,
                   label_smoothing: float, z_loss: float, softcap: float, reduction: str,
                   with_grad: bool, check_targets: bool
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            _check(logits, target, label_smoothing, reduction, z_loss, softcap or None)
            loss, lse = _outputs(logits, reduction)
            grad = torch.empty_like(logits) if with_grad else None
            _launch(ops.default_handle(), logits, target, loss, lse, grad, ignore_index,
                    label_smoothing, z_loss, softcap, reduction, check_targets)
            return loss, lse, grad if with_grad else logits.new_empty((0,))

        @_ce_op.register_fake
        def _(logits, target, ignore_index, label_smoothing, z_loss, softcap, reduction,
              with_grad, check_targets):
            _check(logits, target, label_smoothing, reduction, z_loss, softcap or None)
            loss, lse = _outputs(logits, reduction)
            return loss, lse, torch.empty_like(logits) if with_grad else logits.new_empty((0,))

        @torch.library.custom_op("autotune_dispatch::cross_entropy_", mutates_args=("logits",))
        def _ce_inplace_op(logits: torch.Tensor, target: torch.Tensor, ignore_index: int,
                           label_smoothing: float, z_loss: float, softcap: float,
                           reduction: str, check_targets: bool
                           ) -> tuple[torch.Tensor, torch.Tensor]:
            _check(logits, target, label_smoothing, reduction, z_loss, softcap or None)
            loss, lse = _outputs(logits, reduction)
            _launch(ops.default_handle(), logits, target, loss, lse, logits, ignore_index,
                    label_smoothing, z_loss, softcap, reduction, check_targets)
            return loss, lse

        @_ce_inplace_op.register_fake
        def _(logits, target, ignore_index, label_smoothing, z_loss, softcap, reduction,
              check_targets):
            _check(logits, target, label_smoothing, reduction, z_loss, softcap or None)
            return _outputs(logits, reduction)

        @torch.library.custom_op("autotune_dispatch::cross_entropy_scale_", mutates_args=("grad",))
        def _ce_scale_op(grad: torch.Tensor, g: torch.Tensor, per_row: bool) -> None:
            _scale(ops.default_handle(), grad, g, per_row)

        @_ce_scale_op.register_fake
        def _(grad, g, per_row):
            return None

        _registered = True


def _forward(logits, target, ignore_index, label_smoothing, z_loss, softcap, reduction,
             with_grad, inplace, check_targets):
    """(loss, lse, grad or None) over 2-D logits of rows of one stride."""
    cap = float(softcap or 0.0)
    if _registered and not ops._eager(logits, target):
        o = torch.ops.autotune_dispatch
        if with_grad and inplace:
            loss, lse = o.cross_entropy_(logits, target, ignore_index, label_smoothing, z_loss,
                                         cap, reduction, check_targets)
            return loss, lse, logits
        loss, lse, grad = o.cross_entropy(logits, target, ignore_index, label_smoothing, z_loss,
                                          cap, reduction, with_grad, check_targets)
        return loss, lse, grad if with_grad else None
    loss, lse = _outputs(logits, reduction)  # eager, or a PyTorch without custom_op (before 2.4)
    grad = (logits if inplace else torch.empty_like(logits)) if with_grad else None
    _launch(ops.default_handle(), logits, target, loss, lse, grad, ignore_index,
            label_smoothing, z_loss, cap, reduction, check_targets)
    return loss, lse, grad


def _scale_by(grad, grad_loss, per_row):
    """grad times the loss's gradient, in place, without waiting for the
    GPU: the kernel reads grad_loss and leaves rows whose factor is 1 alone
    (after loss.backward() of a mean, all of them)."""
    g = grad_loss.detach().to(torch.float32).contiguous()
    if _registered and not ops._eager(grad, g):
        torch.ops.autotune_dispatch.cross_entropy_scale_(grad, g, per_row)
    else:
        _scale(ops.default_handle(), grad, g, per_row)
    return grad


if torch is not None:
    class _CrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, logits, target, ignore_index, label_smoothing, z_loss, softcap,
                    reduction, inplace, check_targets):
            with_grad = ctx.needs_input_grad[0]
            loss, lse, grad = _forward(logits, target, ignore_index, label_smoothing, z_loss,
                                       softcap, reduction, with_grad, inplace, check_targets)
            if grad is not None:
                ctx.save_for_backward(grad)
            ctx.mark_non_differentiable(lse)
            # lse takes no gradient: without this autograd would fill a
            # zero tensor for it at every backward (a kernel and a launch)
            ctx.set_materialize_grads(False)
            ctx.reduction = reduction
            return loss, lse

        @staticmethod
        def backward(ctx, grad_loss, grad_lse):
            (grad,) = ctx.saved_tensors
            if grad_loss is None:  # not materialised: the loss took no gradient
                return (None,) * 9
            grad = _scale_by(grad, grad_loss, ctx.reduction == "none")
            return grad, None, None, None, None, None, None, None, None


def _rows2d(logits, target):
    """logits as [M, V] rows of one stride (a copy where they are not) and
    target as [M] contiguous."""
    x = logits.reshape(-1, logits.shape[-1])
    if layout.rows(tuple(x.shape), tuple(x.stride())) is None:
        x = x.contiguous()
    return x, target.reshape(-1).contiguous()


def _empty_batch(logits, reduction):
    """No rows: torch's answers (none: empty, sum: 0, mean: NaN)."""
    f32 = torch.float32
    loss = {"none": logits.new_zeros(logits.shape[:-1], dtype=f32),
            "sum": logits.new_zeros((), dtype=f32),
            "mean": logits.new_full((), float("nan"), dtype=f32)}[reduction]
    return loss, logits.new_zeros(logits.shape[:-1], dtype=f32)


def cross_entropy_with_lse(logits, target, ignore_index=-100, label_smoothing=0.0,
                           reduction="mean", z_loss=0.0, softcap=None, inplace_backward=False,
                           check_targets=True):
    """(loss, lse): see autotune_dispatch.cross_entropy."""
    ops.require_torch(WHAT)
    if not ops._is_compiling():
        _check(logits, target, label_smoothing, reduction, z_loss, softcap)
    lead = tuple(logits.shape[:-1])
    if logits.numel() == 0:
        loss, lse = _empty_batch(logits, reduction)
        return loss, lse
    x, t = _rows2d(logits, target)  # a copy where need be, which then takes the gradient
    grad_on = torch.is_grad_enabled() and logits.requires_grad
    if grad_on:
        loss, lse = _CrossEntropy.apply(x, t, int(ignore_index), float(label_smoothing),
                                        float(z_loss), softcap, reduction, bool(inplace_backward),
                                        bool(check_targets))
    else:
        loss, lse, _ = _forward(x, t, int(ignore_index), float(label_smoothing), float(z_loss),
                                softcap, reduction, False, False, bool(check_targets))
    if reduction == "none":
        loss = loss.reshape(lead)
    return loss, lse.reshape(lead)
