"""View-like aten ops: reshapes become tensor.collapse_shape / expand_shape,
broadcasts a copying linalg.generic, aliases nothing at all."""

from typing import List, Sequence, Tuple

import torch

from ..emitter import Splat, Tensor, TensorType
from ..errors import Unsupported
from .registry import lowers

aten = torch.ops.aten


def _prod(values) -> int:
    p = 1
    for v in values:
        p *= v
    return p


def _groups(a: Sequence[int], b: Sequence[int]) -> List[Tuple[List[int], List[int]]]:
    """Pair consecutive runs of dims of ``a`` and ``b`` with equal products.

    Each pair becomes one dim of the intermediate shape, so ``a`` collapses
    onto it and it expands into ``b``. Trailing size-1 dims join the last run.
    """
    i = j = 0
    groups = []
    while i < len(a) and j < len(b):
        ga, gb, pa, pb = [i], [j], a[i], b[j]
        i, j = i + 1, j + 1
        while pa != pb:
            if pa < pb:
                ga.append(i)
                pa *= a[i]
                i += 1
            else:
                gb.append(j)
                pb *= b[j]
                j += 1
        groups.append((ga, gb))
    if groups:
        groups[-1][0].extend(range(i, len(a)))
        groups[-1][1].extend(range(j, len(b)))
    return groups


def _reassociation(groups) -> str:
    return "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"


def reshape(ctx, x, shape: Sequence[int], result: str = None):
    """Reshape ``x`` (row-major, like torch.view) to the static ``shape``."""
    shape = tuple(int(s) for s in shape)
    if isinstance(x, Splat):
        return Splat(x.value, TensorType(shape, x.type.elem))
    if x.origin is not None and x.origin[0] == "reshape":
        x = x.origin[1]  # reshape the original instead: one op instead of two
    src = x.type.shape
    if src == shape:
        return x
    if _prod(src) != _prod(shape):
        raise Unsupported(f"reshape of {src} to {shape}")
    if 0 in src:
        raise Unsupported("zero-sized tensors")
    fb, elem = ctx.fb, x.type.elem
    result = result or ctx.name
    groups = _groups(src, shape)
    mid = tuple(_prod(src[k] for k in ga) for ga, _ in groups)
    value = x
    if mid != src:  # collapse (to 0-d when `shape` is all ones, reassociation [])
        mid_type = TensorType(mid, elem)
        name = result if mid == shape else fb.fresh(result[1:])
        fb.emit(f"{name} = tensor.collapse_shape {value.name} "
                f"{_reassociation([ga for ga, _ in groups])} : {value.type} into {mid_type}")
        value = Tensor(name, mid_type)
    if mid != shape:
        out = TensorType(shape, elem)
        fb.emit(f"{result} = tensor.expand_shape {value.name} "
                f"{_reassociation([gb for _, gb in groups])} output_shape "
                f"[{', '.join(map(str, shape))}] : {value.type} into {out}")
        value = Tensor(result, out)
    return Tensor(value.name, value.type, origin=("reshape", x))


@lowers(aten.view.default, aten._unsafe_view.default, aten.reshape.default,
        aten.squeeze.dim, aten.squeeze.default, aten.unsqueeze.default,
        aten._reshape_alias.default, aten.view_copy.default, aten.flatten.using_ints)
def view(ctx, x, *args, **kwargs):
    return reshape(ctx, x, ctx.out_type().shape)


if hasattr(aten.squeeze, "dims"):
    lowers(aten.squeeze.dims)(view)


@lowers(aten.detach.default, aten.alias.default, aten.clone.default,
        aten.lift_fresh_copy.default, aten.lift_fresh.default, aten.contiguous.default)
def identity(ctx, x, *args, **kwargs):
    return x


@lowers(aten.expand.default, aten.expand_copy.default, aten.broadcast_to.default)
def expand(ctx, x, size, implicit=False):
    out = ctx.out_type()
    if isinstance(x, Splat):
        return Splat(x.value, out)
    if x.type == out:
        return x
    return ctx.elementwise([x], [x.type.elem], lambda b, v: v[0])
