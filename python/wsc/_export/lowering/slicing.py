"""Slices, concatenation and stacking: tensor.extract_slice / insert_slice.

Every slice is static (offsets, sizes and strides are compile-time ints),
as torch-mlir emits them for static shapes. Slices keep their rank; a
``select`` drops its dim with a ``tensor.collapse_shape`` afterwards.
"""

import torch

from ..emitter import Splat, Tensor, TensorType
from ..errors import Unsupported
from .registry import lowers
from .shapes import reshape

aten = torch.ops.aten


def _bounds(size, start, end, step):
    """Python slice semantics on one dim: (offset, length, stride)."""
    if step is None:
        step = 1
    if step <= 0:
        raise Unsupported(f"slice step {step}")
    start, stop, _ = slice(start, end, step).indices(size)
    return start, max(0, (stop - start + step - 1) // step), step


def extract_slice(ctx, x: Tensor, offsets, sizes, strides, result: str = None) -> Tensor:
    name = result or ctx.fb.fresh(ctx.node.name)
    return Tensor(name, ctx.fb.extract_slice(name, x.name, x.type, offsets, sizes, strides))


def insert_slice(ctx, src: Tensor, dest: Tensor, offsets, strides, result: str = None) -> Tensor:
    name = result or ctx.fb.fresh(ctx.node.name)
    ctx.fb.insert_slice(name, src.name, src.type, dest.name, dest.type, offsets, strides)
    return Tensor(name, dest.type)


def _slice(ctx, x, dim, start, end, step, result=None):
    shape = list(x.type.shape)
    dim %= len(shape)
    offset, length, stride = _bounds(shape[dim], start, end, step)
    offsets, sizes, strides = [0] * len(shape), list(shape), [1] * len(shape)
    offsets[dim], sizes[dim], strides[dim] = offset, length, stride
    if sizes == shape:
        return x
    if isinstance(x, Splat):
        return Splat(x.value, TensorType(tuple(sizes), x.type.elem))
    return extract_slice(ctx, x, offsets, sizes, strides, result)


@lowers(aten.slice.Tensor)
def slice_(ctx, x, dim=0, start=None, end=None, step=1):
    return _slice(ctx, x, dim, start, end, step, ctx.name)


@lowers(aten.select.int)
def select(ctx, x, dim, index):
    dim %= x.type.rank
    index %= x.type.shape[dim]
    piece = _slice(ctx, x, dim, index, index + 1, 1)
    return reshape(ctx, piece, ctx.out_type().shape, ctx.name)


@lowers(aten.split.Tensor)
def split(ctx, x, split_size, dim=0):
    x = ctx.tensor(x)
    dim %= x.type.rank
    size = x.type.shape[dim]
    return tuple(_slice(ctx, x, dim, s, min(s + split_size, size), 1)
                 for s in range(0, size, split_size))


@lowers(aten.split_with_sizes.default)
def split_with_sizes(ctx, x, sizes, dim=0):
    x = ctx.tensor(x)
    dim %= x.type.rank
    pieces, start = [], 0
    for s in sizes:
        pieces.append(_slice(ctx, x, dim, start, start + s, 1))
        start += s
    return tuple(pieces)


def _concat(ctx, parts, dim, out: TensorType) -> Tensor:
    """``parts`` inserted one after the other along ``dim`` into an empty ``out``."""
    if any(part.type.elem != out.elem for part in parts):
        raise Unsupported("joining tensors of different dtypes "
                          f"({', '.join(str(part.type) for part in parts)})")
    acc = Tensor(ctx.fb.empty(out, ctx.node.name), out)
    offset = 0
    for i, part in enumerate(parts):
        offsets = [0] * out.rank
        offsets[dim] = offset
        acc = insert_slice(ctx, part, acc, offsets, [1] * out.rank,
                           ctx.name if i == len(parts) - 1 else None)
        offset += part.type.shape[dim]
    return acc


@lowers(aten.cat.default)
def cat(ctx, tensors, dim=0):
    out = ctx.out_type()
    dim %= out.rank
    parts = [ctx.tensor(t) for t in tensors if t.type.shape != (0,)]
    return _concat(ctx, parts, dim, out)


@lowers(aten.stack.default)
def stack(ctx, tensors, dim=0):
    """torch.stack: each tensor gets a size-1 dim at ``dim`` (an expand_shape),
    then they are concatenated along it. Its backward selects (select.int)."""
    out = ctx.out_type()
    dim %= out.rank
    if len(tensors) == 1:
        return reshape(ctx, tensors[0], out.shape, ctx.name)
    parts = []
    for t in tensors:
        shape = list(t.type.shape)
        shape.insert(dim, 1)
        parts.append(ctx.tensor(reshape(ctx, t, shape, ctx.fb.fresh(ctx.node.name))))
    return _concat(ctx, parts, dim, out)


@lowers(aten.unbind.int)
def unbind(ctx, x, dim=0):
    """torch.unbind: one select per index of ``dim``. Its backward is a stack."""
    x = ctx.tensor(x)
    dim %= x.type.rank
    shape = x.type.shape[:dim] + x.type.shape[dim + 1:]
    return tuple(reshape(ctx, _slice(ctx, x, dim, i, i + 1, 1), shape,
                         ctx.fb.fresh(ctx.node.name))
                 for i in range(x.type.shape[dim]))


@lowers(aten.slice_backward.default)
def slice_backward(ctx, grad, input_sizes, dim, start, end, step):
    grad = ctx.tensor(grad)
    out = ctx.out_type()
    dim %= out.rank
    offset, _, stride = _bounds(out.shape[dim], start, end, step)
    offsets, strides = [0] * out.rank, [1] * out.rank
    offsets[dim], strides[dim] = offset, stride
    zeros = Tensor(ctx.fb.filled(0.0, out, ctx.node.name), out)
    return insert_slice(ctx, grad, zeros, offsets, strides, ctx.name)


@lowers(aten.select_backward.default)
def select_backward(ctx, grad, input_sizes, dim, index):
    grad = ctx.tensor(grad)
    out = ctx.out_type()
    dim %= out.rank
    shape = list(out.shape)
    shape[dim] = 1
    piece = reshape(ctx, grad, shape, ctx.fb.fresh(ctx.node.name))
    offsets = [0] * out.rank
    offsets[dim] = index % out.shape[dim]
    zeros = Tensor(ctx.fb.filled(0.0, out, ctx.node.name), out)
    return insert_slice(ctx, piece, zeros, offsets, [1] * out.rank, ctx.name)
