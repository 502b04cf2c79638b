"""Ops that move elements around: flip, constant padding and running sums.

* ``flip`` reads its input through a reversing indexing map (``-d1 + 5``):
  a copy, exact for every value (inf and nan too).
* ``constant_pad_nd`` (``F.pad``, swin's window padding) is a
  ``tensor.pad`` with the constant, after an ``extract_slice`` for the
  negative pads that crop; its backward is ``constant_pad_nd`` with the pads
  negated, a crop.
* ``cumsum`` is a reduction over a second loop on the summed dim:
  ``out[.., i] = sum_k (k <= i) x[.., k]``, summed in order as the eager
  kernel does. Its work is quadratic in the dim's length.
"""

import torch

from ..emitter import Tensor, affine_map
from ..errors import Unsupported
from .registry import lowers
from .slicing import extract_slice

aten = torch.ops.aten


@lowers(aten.flip.default)
def flip(ctx, x, dims):
    x = ctx.tensor(x)
    out = ctx.out_type()
    rank = out.rank
    flipped = {d % rank for d in dims} if rank else set()
    results = [f"-d{d} + {out.shape[d] - 1}" if d in flipped and out.shape[d] > 1 else f"d{d}"
               for d in range(rank)]
    name = ctx.fb.generic(ctx.name, [(x.name, x.type, affine_map(rank, results))], out,
                          ["parallel"] * rank, lambda b: b.inputs[0])
    return Tensor(name, out)


@lowers(aten.constant_pad_nd.default)
def constant_pad_nd(ctx, x, pad, value=0):
    if len(pad) % 2 or len(pad) // 2 > x.type.rank:
        raise Unsupported(f"a pad of {len(pad)} values for a {x.type.rank}-D tensor")
    rank = x.type.rank
    low, high = [0] * rank, [0] * rank
    for k in range(len(pad) // 2):  # pairs from the last dim backwards
        low[rank - 1 - k], high[rank - 1 - k] = int(pad[2 * k]), int(pad[2 * k + 1])
    out = ctx.out_type()
    x = ctx.tensor(x)
    if any(v < 0 for v in low + high):  # crop first
        offsets = [-v if v < 0 else 0 for v in low]
        sizes = [s + min(lo, 0) + min(hi, 0) for s, lo, hi in zip(x.type.shape, low, high)]
        x = extract_slice(ctx, x, offsets, sizes, [1] * rank)
        low, high = [max(v, 0) for v in low], [max(v, 0) for v in high]
    if not any(low + high):
        return x
    elem = out.elem
    fill = float(value) if elem == "f32" else (bool(value) if elem == "i1" else int(value))
    ctx.fb.pad(ctx.name, x.name, x.type, low, high, fill)
    return Tensor(ctx.name, out)


@lowers(aten.cumsum.default)
def cumsum(ctx, x, dim, dtype=None):
    x = ctx.tensor(x)
    out = ctx.out_type()
    rank = out.rank
    if rank == 0:
        return x
    dim %= rank
    elem = out.elem
    if elem not in ("f32", "i64"):
        raise Unsupported(f"cumsum to {elem}")
    # Loops d0 .. d(rank-1) are the output's; d(rank) runs over the summed dim.
    in_map = affine_map(rank + 1, [f"d{rank}" if d == dim else f"d{d}" for d in range(rank)])
    out_map = affine_map(rank + 1, [f"d{d}" for d in range(rank)])
    init = ctx.fb.filled(0 if elem == "i64" else 0.0, out, ctx.node.name)

    def body(b):
        i = b.op(f"arith.index_cast {b.index(dim)} : index to i64")
        k = b.op(f"arith.index_cast {b.index(rank)} : index to i64")
        keep = b.cmp("ole", k, i, "i64")
        value = b.cast(b.inputs[0], x.type.elem, elem)
        term = b.select(keep, value, b.const(0 if elem == "i64" else 0.0, elem), elem)
        return b.arith("addi" if elem == "i64" else "addf", b.out, term, elem)

    name = ctx.fb.generic(ctx.name, [(x.name, x.type, in_map)], out,
                          ["parallel"] * rank + ["reduction"], body, init=init, out_map=out_map)
    return Tensor(name, out)


@lowers(aten.isnan.default)
def isnan(ctx, x):
    return ctx.elementwise([x], ["f32"], lambda b, v: b.cmp("uno", v[0], v[0], "f32"))
