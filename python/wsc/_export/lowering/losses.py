"""nll_loss and nll_loss2d, forward and backward, with PyTorch's semantics:
class weights, ``ignore_index`` and the three reductions, on (N, C) inputs
with (N,) labels and (N, C, d1, ...) inputs with (N, d1, ...) labels.

The label picks its class by comparing ``linalg.index`` of the class dim
with the label (a one-hot select), never by a gather; a label equal to
``ignore_index`` picks nothing, so it adds no loss, no weight and no
gradient.

``mean`` divides by the total weight of the non-ignored labels (their
count without class weights): a sum over the batch, so data-dependent.
Each sample's term is divided by that total before the terms are summed:
with several systems each one's loss is then its share of the whole
batch's, which SwarmX adds up, and ``wsc-sync-batch-statistics``
all-reduces the total where it meets the per-sample terms, as it does for
BatchNorm. Every label ignored gives 0 / 0 = nan and zero gradients, as in
PyTorch. Labels outside [0, C) other than ``ignore_index`` are rejected by
the runtime (``wsc.num_classes``, ``wsc.ignore_index``).
"""

import torch

from ..emitter import Splat, Tensor, TensorType, affine_map, identity_map
from ..errors import Unsupported
from .registry import lowers
from . import sign  # noqa: F401  (register: L1Loss's backward)

aten = torch.ops.aten

_NONE, _MEAN, _SUM = 0, 1, 2


class _Problem:
    """The shapes and options of one nll_loss call.

    Loops run over the input's dims (N, C, d1, ...); the class dim is d1 and
    reduces when a result has no class dim.
    """

    def __init__(self, log_probs, target, weight, reduction, ignore_index):
        if not isinstance(target, Tensor) or target.type.elem != "i64":
            raise Unsupported("class labels must be an int64 tensor")
        shape = log_probs.type.shape
        if len(shape) < 2:
            raise Unsupported(f"input of shape {list(shape)} has no batch dim; the input must "
                              "be (batch, classes, ...)")
        if tuple(target.type.shape) != (shape[0],) + tuple(shape[2:]):
            raise Unsupported(f"labels of shape {list(target.type.shape)} for an input of shape "
                              f"{list(shape)}")
        if reduction not in (_NONE, _MEAN, _SUM):
            raise Unsupported(f"reduction={reduction}")
        if isinstance(weight, Tensor) and tuple(weight.type.shape) != (shape[1],):
            raise Unsupported(f"class weights of shape {list(weight.type.shape)} for "
                              f"{shape[1]} classes")
        self.log_probs, self.target, self.weight = log_probs, target, weight
        self.reduction, self.ignore_index = reduction, int(ignore_index)
        self.rank = len(shape)
        self.classes = shape[1]
        self.sample_dims = ["d0"] + [f"d{k}" for k in range(2, self.rank)]
        self.sample_type = TensorType((shape[0],) + tuple(shape[2:]), "f32")

    def label_inputs(self):
        """Generic inputs for the label and the class weights (when a tensor)."""
        inputs = [(self.target.name, self.target.type, affine_map(self.rank, self.sample_dims))]
        if isinstance(self.weight, Tensor):
            inputs.append((self.weight.name, self.weight.type, affine_map(self.rank, ["d1"])))
        return inputs

    def class_weight(self, b):
        """The weight of this iteration's class (after label_inputs in b.inputs)."""
        if isinstance(self.weight, Tensor):
            return b.inputs[1]
        if isinstance(self.weight, Splat):
            return b.const(float(self.weight.value), "f32")
        return None

    def picks(self, b):
        """i1: the label is this iteration's class and not ignored."""
        label = b.inputs[0]
        cls = b.op(f"arith.index_cast {b.index(1)} : index to i64")
        hit = b.cmp("oeq", cls, label, "i64")
        if 0 <= self.ignore_index < self.classes:  # else no class can equal it
            kept = b.cmp("une", label, b.const(self.ignore_index, "i64"), "i64")
            hit = b.op(f"arith.andi {hit}, {kept} : i1")
        return hit


def _problem(ctx, log_probs, target, weight, reduction, ignore_index):
    return _Problem(ctx.tensor(log_probs), target, weight, reduction, ignore_index)


def _weighted_nll(ctx, p: _Problem) -> Tensor:
    """Per sample: -weight[label] * log_probs[label], 0 where ignored."""
    fb = ctx.fb
    init = fb.filled(0.0, p.sample_type, ctx.node.name)
    inputs = p.label_inputs() + [(p.log_probs.name, p.log_probs.type, identity_map(p.rank))]

    def body(b):
        lp = b.inputs[-1]
        w = p.class_weight(b)
        term = b.arith("mulf", lp, w, "f32") if w is not None else lp
        picked = b.select(p.picks(b), term, b.const(0.0, "f32"), "f32")
        return b.arith("subf", b.out, picked, "f32")

    name = fb.fresh(ctx.node.name)
    iterators = ["parallel", "reduction"] + ["parallel"] * (p.rank - 2)
    fb.generic(name, inputs, p.sample_type, iterators, body, init=init,
               out_map=affine_map(p.rank, p.sample_dims))
    return Tensor(name, p.sample_type)


def _total_weight(ctx, p: _Problem) -> Tensor:
    """The sum over the batch of weight[label] (1 without weights) over the
    non-ignored labels: PyTorch's total_weight. Only a weight tensor needs
    the class loop (a loop no operand indexes would have no size)."""
    fb = ctx.fb
    scalar = TensorType((), "f32")
    init = fb.filled(0.0, scalar, ctx.node.name)
    per_class = isinstance(p.weight, Tensor)

    def body(b):
        zero = b.const(0.0, "f32")
        if per_class:
            kept = p.picks(b)
        else:
            kept = b.cmp("une", b.inputs[0], b.const(p.ignore_index, "i64"), "i64")
        w = p.class_weight(b) or b.const(1.0, "f32")
        return b.arith("addf", b.out, b.select(kept, w, zero, "f32"), "f32")

    if per_class:
        inputs, rank = p.label_inputs(), p.rank
    else:
        rank = p.rank - 1
        inputs = [(p.target.name, p.target.type, identity_map(rank))]
    name = fb.fresh(ctx.node.name)
    fb.generic(name, inputs, scalar, ["reduction"] * rank, body, init=init,
               out_map=affine_map(rank, []))
    return Tensor(name, scalar)


def _sum_samples(ctx, per_sample: Tensor, divisor: Tensor = None) -> Tensor:
    """The sum over all samples, then divided by ``divisor`` if given (the
    mean: like eager, one division of the sum; with several systems the sum
    stays each system's share and only the divisor is all-reduced)."""
    fb = ctx.fb
    rank = per_sample.type.rank
    scalar = TensorType((), "f32")
    init = fb.filled(0.0, scalar, ctx.node.name)
    total = ctx.name if divisor is None else fb.fresh(ctx.node.name)
    fb.generic(total, [(per_sample.name, per_sample.type, identity_map(rank))], scalar,
               ["reduction"] * rank, lambda b: b.arith("addf", b.out, b.inputs[0], "f32"),
               init=init, out_map=affine_map(rank, []))
    if divisor is None:
        return Tensor(total, scalar)
    fb.generic(ctx.name, [(total, scalar, affine_map(0, [])),
                          (divisor.name, divisor.type, affine_map(0, []))], scalar, [],
               lambda b: b.arith("divf", b.inputs[0], b.inputs[1], "f32"))
    return Tensor(ctx.name, scalar)


@lowers(aten.nll_loss_forward.default, aten.nll_loss2d_forward.default)
def nll_loss_forward(ctx, log_probs, target, weight, reduction, ignore_index):
    p = _problem(ctx, log_probs, target, weight, reduction, ignore_index)
    per_sample = _weighted_nll(ctx, p)
    total_weight = _total_weight(ctx, p)  # dropped unless the mean or the backward reads it
    if reduction == _NONE:
        return per_sample, total_weight
    return _sum_samples(ctx, per_sample, total_weight if reduction == _MEAN else None), \
        total_weight


@lowers(aten.nll_loss_backward.default, aten.nll_loss2d_backward.default)
def nll_loss_backward(ctx, grad_output, log_probs, target, weight, reduction, ignore_index,
                      total_weight):
    p = _problem(ctx, log_probs, target, weight, reduction, ignore_index)
    out = ctx.out_type()
    inputs = p.label_inputs()
    scalars = {}  # operand -> its body value: an input index or a constant

    def operand(key, value, sample_map):
        if isinstance(value, Splat):
            scalars[key] = ("const", float(value.value))
            return
        value = ctx.tensor(value)
        per_sample = value.type.rank > 0
        if per_sample and tuple(value.type.shape) != p.sample_type.shape:
            raise Unsupported(f"{key} of shape {list(value.type.shape)}")
        scalars[key] = ("in", len(inputs))
        inputs.append((value.name, value.type,
                       affine_map(p.rank, p.sample_dims if per_sample and sample_map else [])))

    operand("grad_output", grad_output, True)
    if reduction == _MEAN:
        operand("total_weight", total_weight, False)

    def value(b, key):
        kind, x = scalars[key]
        return b.inputs[x] if kind == "in" else b.const(x, "f32")

    def body(b):
        g = value(b, "grad_output")
        if reduction == _MEAN:
            g = b.arith("divf", g, value(b, "total_weight"), "f32")
        g = b.negf(g)  # -(grad / total_weight), then * weight[label], as PyTorch's kernel
        w = p.class_weight(b)
        if w is not None:
            g = b.arith("mulf", w, g, "f32")
        return b.select(p.picks(b), g, b.const(0.0, "f32"), "f32")

    ctx.fb.generic(ctx.name, inputs, out, ["parallel"] * p.rank, body)
    return Tensor(ctx.name, out)
