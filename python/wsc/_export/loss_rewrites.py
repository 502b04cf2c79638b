"""Stock PyTorch losses in forms that make_fx can trace on fake tensors.

* ``cross_entropy`` with ``label_smoothing`` and class-index targets: torch
  1.13's C++ composite divides the smoothing term's mean by a sum taken
  with ``masked_select``, whose shape depends on the labels, so fake
  tensors cannot run it. While tracing, ``torch.nn.functional.
  cross_entropy`` (which ``nn.CrossEntropyLoss`` calls) is replaced by the
  same formula written with ops of fixed shapes: the divisor is nll_loss's
  total weight. Everything else goes to the original function.
* ``binary_cross_entropy_with_logits`` and ``huber_loss_backward``:
  torch._decomp's decompositions, which are the eager kernels' formulas
  (BCE's backward is autograd's formula in plain ops already).
  ``smooth_l1_loss`` and its backward have none in torch 1.13, and
  ``huber_loss``'s reduces with prims: they are written here after the
  eager kernels.
"""

import contextlib

import torch
import torch.nn.functional as F
from torch._decomp import get_decompositions
from torch.nn import _reduction

aten = torch.ops.aten

_MEAN, _SUM = 1, 2


def _reduce(loss, reduction: int):
    if reduction == _MEAN:
        return loss.mean()
    return loss.sum() if reduction == _SUM else loss


def smooth_l1_loss(input, target, reduction: int = _MEAN, beta: float = 1.0):
    """|x - y| = z: 0.5 z^2 / beta where z < beta, else z - 0.5 beta (beta 0: z)."""
    z = (input - target).abs()
    if beta == 0:
        return _reduce(z, reduction)
    return _reduce(torch.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), reduction)


def huber_loss(input, target, reduction: int = _MEAN, delta: float = 1.0):
    """|x - y| = z: 0.5 z^2 where z < delta, else delta (z - 0.5 delta)."""
    z = (input - target).abs()
    return _reduce(torch.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)), reduction)


def smooth_l1_loss_backward(grad_output, input, target, reduction: int, beta: float):
    x = input - target
    if beta == 0:  # l1_loss_backward: sgn(x) * grad / numel for the mean
        return x.sgn() * (grad_output / input.numel() if reduction == _MEAN else grad_output)
    norm = 1.0 / input.numel() if reduction == _MEAN else 1.0
    return torch.where(x <= -beta, -norm * grad_output,
                       torch.where(x >= beta, norm * grad_output, norm * x * grad_output / beta))


LOSS_DECOMPOSITIONS = {
    **get_decompositions([aten.binary_cross_entropy_with_logits, aten.huber_loss_backward]),
    aten.huber_loss.default: huber_loss,
    aten.smooth_l1_loss.default: smooth_l1_loss,
    aten.smooth_l1_loss_backward.default: smooth_l1_loss_backward,
}


def _nll_with_total_weight(log_probs, target, weight, reduction: int, ignore_index: int):
    """nll_loss and its total weight (of the non-ignored labels), as nll_loss_nd
    computes them; an input (N, C, d1, ...) goes through nll_loss2d."""
    if log_probs.dim() == 2:
        return aten.nll_loss_forward(log_probs, target, weight, reduction, ignore_index)
    n, c = log_probs.shape[:2]
    out, total = aten.nll_loss2d_forward(log_probs.reshape(n, c, 1, -1),
                                         target.reshape(n, 1, -1), weight, reduction,
                                         ignore_index)
    return (out.reshape(target.shape) if reduction == 0 else out), total


def smoothed_cross_entropy(input, target, weight, ignore_index: int, reduction: str,
                           label_smoothing: float):
    """torch 1.13's cross_entropy_loss_label_smoothing with class-index targets.

    The ``mean`` of the smoothing term divides each sample's term by the
    total weight before summing (the nll lowering does the same, see
    lowering/losses.py): the same value, and with several systems each
    one's share of it.
    """
    classes = input.shape[1]
    log_probs = torch.log_softmax(input, 1)
    nll, total_weight = _nll_with_total_weight(log_probs, target, weight,
                                               _reduction.get_enum(reduction), ignore_index)
    if weight is not None:
        shape = [1] * input.dim()
        shape[1] = classes
        smooth = -(log_probs * weight.view(shape)).sum(1)
    else:
        smooth = -log_probs.sum(1)
    smooth = smooth.masked_fill(target == ignore_index, 0.0)
    if reduction == "mean":
        smooth = (smooth / total_weight).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / classes)


@contextlib.contextmanager
def traceable_losses():
    """Within: ``F.cross_entropy`` with label smoothing traces (see above)."""
    original = F.cross_entropy

    def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                      reduce=None, reduction="mean", label_smoothing=0.0):
        if (0.0 < label_smoothing <= 1.0 and isinstance(input, torch.Tensor)
                and input.dim() >= 2 and isinstance(target, torch.Tensor)
                and not target.is_floating_point()):
            if size_average is not None or reduce is not None:
                reduction = _reduction.legacy_get_string(size_average, reduce)
            return smoothed_cross_entropy(input, target, weight, ignore_index, reduction,
                                          label_smoothing)
        return original(input, target, weight, size_average, ignore_index, reduce, reduction,
                        label_smoothing)

    F.cross_entropy = cross_entropy
    try:
        yield
    finally:
        F.cross_entropy = original
