"""Reductions: a linalg.generic with reduction iterators over a linalg.fill init.

keepdim results are reduced first and then expanded with tensor.expand_shape,
so every generic writes its output through a plain projection.
"""

import torch

from ..emitter import Tensor, TensorType, affine_map, identity_map
from ..errors import Unsupported
from .registry import lowers
from .shapes import reshape

aten = torch.ops.aten


def _dims(dims, rank):
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(rank))  # torch: an empty dim list reduces everything
    if isinstance(dims, int):
        dims = [dims]
    return sorted({d % rank for d in dims}) if rank else []


def reduce(ctx, x, dims, keepdim, init, combine, out_elem=None, result=None):
    """Reduce ``x`` over ``dims`` with ``combine(body, element, accumulator)``.

    The value is named ``result`` (default: the current node's name).
    """
    x = ctx.tensor(x)
    rank, shape = x.type.rank, x.type.shape
    dims = _dims(dims, rank)
    out_elem = out_elem or x.type.elem
    kept = [i for i in range(rank) if i not in dims]
    red_type = TensorType(tuple(shape[i] for i in kept), out_elem)
    final_shape = tuple(1 if i in dims else s for i, s in enumerate(shape)) if keepdim \
        else red_type.shape
    result = result or ctx.name
    name = result if red_type.shape == final_shape else ctx.fb.fresh(ctx.node.name)
    acc = ctx.fb.filled(init, red_type, ctx.node.name)
    iterators = ["reduction" if i in dims else "parallel" for i in range(rank)]

    def body(b):
        element = b.cast(b.inputs[0], x.type.elem, out_elem)
        return combine(b, element, b.out)

    ctx.fb.generic(name, [(x.name, x.type, identity_map(rank))], red_type, iterators, body,
                   init=acc, out_map=affine_map(rank, [f"d{i}" for i in kept]))
    value = Tensor(name, red_type)
    if red_type.shape != final_shape:
        value = reshape(ctx, value, final_shape, result=result)
    return value


def _sum(ctx, x, dims, keepdim, result=None):
    e = ctx.out_type().elem
    if e == "f32":
        return reduce(ctx, x, dims, keepdim, 0.0, lambda b, v, acc: b.arith("addf", v, acc, "f32"),
                      e, result)
    if e == "i64":
        return reduce(ctx, x, dims, keepdim, 0, lambda b, v, acc: b.arith("addi", v, acc, "i64"),
                      e, result)
    raise Unsupported(f"sum producing {e}")


@lowers(aten.sum.dim_IntList)
def sum_dims(ctx, x, dims, keepdim=False, dtype=None):
    return _sum(ctx, x, dims, keepdim)


@lowers(aten.sum.default)
def sum_all(ctx, x, dtype=None):
    return _sum(ctx, x, None, False)


def _mean(ctx, x, dims, keepdim):
    if ctx.out_type().elem != "f32":
        raise Unsupported("mean of a non-float tensor")
    total = _sum(ctx, x, dims, keepdim, result=ctx.fb.fresh(ctx.node.name))
    shape = ctx.tensor(x).type.shape
    count = 1
    for d in _dims(dims, len(shape)):
        count *= shape[d]
    # sum / N like torch's mean, N a compile-time constant.
    return ctx.elementwise([total, float(count)], ["f32", "f32"],
                           lambda b, v: b.arith("divf", v[0], v[1], "f32"))


@lowers(aten.mean.dim)
def mean_dims(ctx, x, dims, keepdim=False, dtype=None):
    return _mean(ctx, x, dims, keepdim)


@lowers(aten.mean.default)
def mean_all(ctx, x, dtype=None):
    return _mean(ctx, x, None, False)


@lowers(aten.amax.default, aten.amin.default)
def amax(ctx, x, dims=(), keepdim=False):
    if ctx.out_type().elem != "f32":
        raise Unsupported("amax/amin of a non-float tensor")
    is_max = ctx.op is aten.amax.default
    # maximumf/minimumf propagate NaN, as torch.amax does.
    opname = "maximumf" if is_max else "minimumf"
    init = float("-inf") if is_max else float("inf")
    return reduce(ctx, x, dims, keepdim, init, lambda b, v, acc: b.arith(opname, v, acc, "f32"))


def _add(b, v, acc):
    return b.arith("addf", v, acc, "f32")


@lowers(aten.var_mean.correction, aten.var.correction)
def var_mean(ctx, x, dims=None, correction=None, keepdim=False):
    """Two-pass variance: mean first, then the mean-subtracted squares."""
    x = ctx.tensor(x)
    if x.type.elem != "f32":
        raise Unsupported("variance of a non-float tensor")
    fb, base = ctx.fb, ctx.node.name
    dims = _dims(dims, x.type.rank)
    count = 1
    for d in dims:
        count *= x.type.shape[d]
    correction = 1 if correction is None else correction
    total = reduce(ctx, x, dims, True, 0.0, _add, result=fb.fresh(base))
    mean = ctx.elementwise([total, float(count)], ["f32", "f32"],
                           lambda b, v: b.arith("divf", v[0], v[1], "f32"),
                           out_type=total.type, result=fb.fresh(base))

    def square_diff(b, v):
        d = b.arith("subf", v[0], v[1], "f32")
        return b.arith("mulf", d, d, "f32")

    squares = ctx.elementwise([x, mean], ["f32", "f32"], square_diff, out_type=x.type,
                              result=fb.fresh(base))
    ssq = reduce(ctx, squares, dims, keepdim, 0.0, _add, result=fb.fresh(base))
    var = ctx.elementwise([ssq, float(max(0, count - correction))], ["f32", "f32"],
                          lambda b, v: b.arith("divf", v[0], v[1], "f32"),
                          out_type=ssq.type, result=ctx.name if ctx.op is aten.var.correction
                          else fb.fresh(base))
    if ctx.op is aten.var.correction:
        return var
    if not keepdim:
        mean = reshape(ctx, mean, ssq.type.shape, result=fb.fresh(base))
    return var, mean
