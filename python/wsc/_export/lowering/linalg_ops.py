"""Contractions and permutations: linalg.matmul / batch_matmul / transpose."""

import torch

from ..emitter import Splat, Tensor, TensorType
from ..errors import Unsupported
from .registry import lowers

aten = torch.ops.aten


def _contract(ctx, opname, a, b):
    a, b = ctx.tensor(a), ctx.tensor(b)
    out = ctx.out_type()
    if not (a.type.elem == b.type.elem == out.elem == "f32"):
        raise Unsupported("matrix products of non-float tensors")
    init = ctx.fb.filled(0.0, out, ctx.node.name)  # torch-mlir style zero init
    ctx.fb.emit(f"{ctx.name} = linalg.{opname} ins({a.name}, {b.name} : {a.type}, {b.type}) "
                f"outs({init} : {out}) -> {out}")
    return Tensor(ctx.name, out)


@lowers(aten.mm.default)
def mm(ctx, a, b):
    return _contract(ctx, "matmul", a, b)


@lowers(aten.bmm.default)
def bmm(ctx, a, b):
    return _contract(ctx, "batch_matmul", a, b)


def transpose(ctx, x, perm):
    """``result[i0, i1, ..] = x[..]`` with ``result.shape[i] == x.shape[perm[i]]``."""
    perm = [int(p) for p in perm]
    shape = tuple(x.type.shape[p] for p in perm)
    out = TensorType(shape, x.type.elem)
    if perm == sorted(perm):
        return x
    if isinstance(x, Splat):
        return Splat(x.value, out)
    if x.origin is not None and x.origin[0] == "transpose":  # compose the two
        _, src, first = x.origin
        combined = [first[p] for p in perm]
        if combined == sorted(combined):
            return src
    init = ctx.fb.empty(out, ctx.node.name)
    ctx.fb.emit(f"{ctx.name} = linalg.transpose ins({x.name} : {x.type}) "
                f"outs({init} : {out}) permutation = [{', '.join(map(str, perm))}]")
    return Tensor(ctx.name, out, origin=("transpose", x, perm))


@lowers(aten.t.default)
def t(ctx, x):
    return transpose(ctx, x, [1, 0] if x.type.rank == 2 else list(range(x.type.rank)))


@lowers(aten.transpose.int)
def transpose_int(ctx, x, dim0, dim1):
    rank = x.type.rank
    perm = list(range(rank))
    if rank:
        d0, d1 = dim0 % rank, dim1 % rank
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return transpose(ctx, x, perm)


@lowers(aten.permute.default)
def permute(ctx, x, dims):
    rank = x.type.rank
    return transpose(ctx, x, [d % rank for d in dims] if rank else [])


@lowers(aten.baddbmm.default)
def baddbmm(ctx, bias, a, b, beta=1, alpha=1):
    """``beta * bias + alpha * (a @ b)`` (nn.MultiheadAttention's masked scores)."""
    a, b = ctx.tensor(a), ctx.tensor(b)
    out = ctx.out_type()
    init = ctx.fb.filled(0.0, out, ctx.node.name)
    product = ctx.fb.fresh(ctx.node.name)
    ctx.fb.emit(f"{product} = linalg.batch_matmul ins({a.name}, {b.name} : {a.type}, "
                f"{b.type}) outs({init} : {out}) -> {out}")

    def body(blk, v):
        scaled = v[1] if alpha == 1 else blk.arith("mulf", v[1], blk.const(alpha, "f32"), "f32")
        if beta == 0:
            return scaled
        shifted = v[0] if beta == 1 else blk.arith("mulf", v[0], blk.const(beta, "f32"), "f32")
        return blk.arith("addf", shifted, scaled, "f32")

    return ctx.elementwise([bias, Tensor(product, out)], ["f32", "f32"], body)
