"""Gathers by index: embeddings, arange and triangular masks.

Forward embedding is torch-mlir's gather: a parallel linalg.generic over the
indices whose body reads the table with ``tensor.extract``. Its gradient is
a one-hot reduction, ``grad[v, d] = sum_t (idx[t] == v) * g[t, d]``, an
upstream form that wsc-opt recognises and the runtime executes as a
scatter-add over the rows the batch touches.
"""

import torch

from ..emitter import Tensor, TensorType, affine_map
from ..errors import Unsupported
from .registry import lowers

aten = torch.ops.aten


@lowers(aten.embedding.default)
def embedding(ctx, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    weight, indices = ctx.tensor(weight), ctx.tensor(indices)
    if weight.type.rank != 2:
        raise Unsupported("an embedding table that is not 2-D")
    out = ctx.out_type()
    rank = out.rank
    idx_map = affine_map(rank, [f"d{i}" for i in range(rank - 1)])

    def body(b):
        row = b.op(f"arith.index_cast {b.inputs[0]} : {indices.type.elem} to index")
        col = b.index(rank - 1)
        return b.op(f"tensor.extract {weight.name}[{row}, {col}] : {weight.type}")

    name = ctx.fb.generic(ctx.name, [(indices.name, indices.type, idx_map)], out,
                          ["parallel"] * rank, body)
    return Tensor(name, out)


@lowers(aten.embedding_dense_backward.default)
def embedding_dense_backward(ctx, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    if scale_grad_by_freq:
        raise Unsupported("scale_grad_by_freq=True")
    grad, indices = ctx.tensor(grad), ctx.tensor(indices)
    out = ctx.out_type()
    tokens = indices.type.rank
    # Loops: (v, d, t0 .. tn-1); v and d parallel, the tokens reduced.
    rank = 2 + tokens
    tok = [f"d{2 + i}" for i in range(tokens)]
    idx_map = affine_map(rank, tok)
    grad_map = affine_map(rank, tok + ["d1"])
    out_map = affine_map(rank, ["d0", "d1"])
    init = ctx.fb.filled(0.0, out, ctx.node.name)

    def body(b):
        row = b.op(f"arith.index_cast {b.index(0)} : index to {indices.type.elem}")
        hit = b.cmp("oeq", b.inputs[0], row, indices.type.elem)
        if padding_idx is not None and padding_idx >= 0:
            pad = b.const(int(padding_idx), indices.type.elem)
            hit = b.op(f"arith.andi {hit}, {b.cmp('une', row, pad, indices.type.elem)} : i1")
        term = b.select(hit, b.inputs[1], b.const(0.0, "f32"), "f32")
        return b.arith("addf", b.out, term, "f32")

    name = ctx.fb.generic(ctx.name, [(indices.name, indices.type, idx_map),
                                     (grad.name, grad.type, grad_map)],
                          out, ["parallel", "parallel"] + ["reduction"] * tokens, body,
                          init=init, out_map=out_map)
    return Tensor(name, out)


def _arange(ctx, start, step):
    out = ctx.out_type()

    def body(b):
        i = b.op(f"arith.index_cast {b.index(0)} : index to i64")
        if out.elem == "i64":
            v = b.arith("muli", i, b.const(int(step), "i64"), "i64")
            return b.arith("addi", v, b.const(int(start), "i64"), "i64")
        f = b.cast(i, "i64", "f32")
        v = b.arith("mulf", f, b.const(float(step), "f32"), "f32")
        return b.arith("addf", v, b.const(float(start), "f32"), "f32")

    return Tensor(ctx.fb.generic(ctx.name, [], out, ["parallel"], body), out)


@lowers(aten.arange.default)
def arange(ctx, end, **kwargs):
    return _arange(ctx, 0, 1)


@lowers(aten.arange.start)
def arange_start(ctx, start, end, **kwargs):
    return _arange(ctx, start, 1)


@lowers(aten.arange.start_step)
def arange_start_step(ctx, start, end, step=1, **kwargs):
    return _arange(ctx, start, step)


def _triangle(ctx, x, diagonal, upper):
    """Keep ``x[.., i, j]`` where ``j - i >= diagonal`` (upper) or ``<=`` (lower)."""
    x = ctx.tensor(x)
    out = ctx.out_type()
    rank = out.rank
    if rank < 2:
        raise Unsupported("triu/tril of a tensor with fewer than 2 dims")

    def body(b):
        i = b.op(f"arith.index_cast {b.index(rank - 2)} : index to i64")
        j = b.op(f"arith.index_cast {b.index(rank - 1)} : index to i64")
        diff = b.arith("subi", j, i, "i64")
        keep = b.cmp("oge" if upper else "ole", diff, b.const(int(diagonal), "i64"), "i64")
        return b.select(keep, b.inputs[0], b.const(0, out.elem), out.elem)

    ident = affine_map(rank, [f"d{i}" for i in range(rank)])
    name = ctx.fb.generic(ctx.name, [(x.name, x.type, ident)], out, ["parallel"] * rank, body)
    return Tensor(name, out)


@lowers(aten.triu.default)
def triu(ctx, x, diagonal=0):
    return _triangle(ctx, x, diagonal, True)


@lowers(aten.tril.default)
def tril(ctx, x, diagonal=0):
    return _triangle(ctx, x, diagonal, False)
