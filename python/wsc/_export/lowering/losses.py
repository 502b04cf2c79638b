"""nll_loss forward/backward with integer class labels.

The label picks its class by comparing ``linalg.index`` of the class dim with
the label (a one-hot select), never by a gather. The mean divides by the
batch size, a compile-time constant, not by a data-dependent count of
non-ignored labels: that keeps per-shard data-parallel math exact, and labels
outside [0, C) are rejected by the runtime (``wsc.num_classes``).
"""

import torch

from ..emitter import Splat, Tensor, TensorType, affine_map, identity_map
from ..errors import Unsupported
from .registry import lowers

aten = torch.ops.aten

_NONE, _MEAN, _SUM = 0, 1, 2


def _check(ctx, log_probs, target, weight, reduction, ignore_index):
    if weight is not None:
        raise Unsupported("class weights (CrossEntropyLoss(weight=...))")
    if not isinstance(target, Tensor) or target.type.elem != "i64":
        raise Unsupported("class labels must be an int64 tensor")
    if log_probs.type.rank != 2 or target.type.rank != 1:
        raise Unsupported(f"input of shape {list(log_probs.type.shape)}: only (batch, classes) "
                          "inputs with (batch,) labels are supported")
    n, c = log_probs.type.shape
    if 0 <= ignore_index < c:
        raise Unsupported(f"ignore_index={ignore_index} is a valid class; only an "
                          "ignore_index outside [0, num_classes) is supported")
    if reduction not in (_NONE, _MEAN, _SUM):
        raise Unsupported(f"reduction={reduction}")
    return n, c


def _picks(b, label):
    """i1: is the class index of this iteration the label?"""
    cls = b.op(f"arith.index_cast {b.index(1)} : index to i64")
    return b.cmp("oeq", cls, label, "i64")


@lowers(aten.nll_loss_forward.default)
def nll_loss_forward(ctx, log_probs, target, weight, reduction, ignore_index):
    log_probs = ctx.tensor(log_probs)
    n, c = _check(ctx, log_probs, target, weight, reduction, ignore_index)
    fb = ctx.fb
    per_sample = reduction == _NONE
    acc_type = TensorType((n,) if per_sample else (), "f32")
    acc_name = ctx.name if reduction != _MEAN else fb.fresh(ctx.node.name)
    acc = fb.filled(0.0, acc_type, ctx.node.name)

    def body(b):
        lp, label = b.inputs
        picked = b.select(_picks(b, label), lp, b.const(0.0, "f32"), "f32")
        return b.arith("subf", b.out, picked, "f32")  # accumulates -log p[label]

    fb.generic(acc_name,
               [(log_probs.name, log_probs.type, identity_map(2)),
                (target.name, target.type, affine_map(2, ["d0"]))],
               acc_type, ["parallel" if per_sample else "reduction", "reduction"], body,
               init=acc, out_map=affine_map(2, ["d0"] if per_sample else []))
    loss = Tensor(acc_name, acc_type)
    if reduction == _MEAN:
        loss = ctx.elementwise([loss, float(n)], ["f32", "f32"],
                               lambda b, v: b.arith("divf", v[0], v[1], "f32"),
                               out_type=acc_type)
    # total_weight: only nll_loss_backward reads it, and it uses the constant too.
    return loss, Splat(float(n), TensorType((), "f32"))


@lowers(aten.nll_loss_backward.default)
def nll_loss_backward(ctx, grad_output, log_probs, target, weight, reduction, ignore_index,
                      total_weight):
    log_probs = ctx.tensor(log_probs)
    n, c = _check(ctx, log_probs, target, weight, reduction, ignore_index)
    out = ctx.out_type()
    inputs = [(target.name, target.type, affine_map(2, ["d0"]))]
    grad_const = None
    if isinstance(grad_output, Splat):
        grad_const = float(grad_output.value)
    else:
        grad_output = ctx.tensor(grad_output)
        per_sample = grad_output.type.rank == 1
        inputs.append((grad_output.name, grad_output.type, affine_map(2, ["d0"] if per_sample else [])))

    def body(b):
        label = b.inputs[0]
        g = b.const(grad_const, "f32") if grad_const is not None else b.inputs[1]
        if reduction == _MEAN:
            g = b.arith("divf", g, b.const(float(n), "f32"), "f32")
        g = b.negf(g)  # -(grad / N), as in PyTorch's kernel
        return b.select(_picks(b, label), g, b.const(0.0, "f32"), "f32")

    ctx.fb.generic(ctx.name, inputs, out, ["parallel", "parallel"], body)
    return Tensor(ctx.name, out)
