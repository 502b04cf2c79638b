"""Slices, concatenation and stacking: tensor.extract_slice / insert_slice.

Every slice is static (offsets, sizes and strides are compile-time ints),
as torch-mlir emits them for static shapes. Slices keep their rank; a
``select`` drops its dim with a ``tensor.collapse_shape`` afterwards.
"""

from typing import List, NamedTuple, Optional

import torch
import torch.fx

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


def _contiguous_strides(shape) -> List[int]:
    strides, step = [], 1
    for n in reversed(list(shape)):
        strides.append(step)
        step *= int(n)
    return strides[::-1]


def _numel(shape) -> int:
    count = 1
    for n in shape:
        count *= int(n)
    return count


def _same_strides(shape, a, b) -> bool:
    """Strides that address the same elements: equal on every dim longer than one."""
    return all(int(n) == 1 or int(x) == int(y) for n, x, y in zip(shape, a, b))


class StridedSlice(NamedTuple):
    """A view of a contiguous tensor as a slice: per dim of the tensor an
    offset, a length and a step; ``dropped`` are its dims the view does not
    have (length one), as a select drops them."""
    offsets: List[int]
    sizes: List[int]
    steps: List[int]
    dropped: List[int]


def strided_slice(shape, size, stride, offset) -> Optional[StridedSlice]:
    """The slice that ``as_strided(size, stride, offset)`` reads from a
    contiguous tensor of ``shape``, or None when it is not one. Each dim of
    the view takes a dim of the tensor, in order."""
    base = _contiguous_strides(shape)
    rank = len(shape)
    starts, rest = [], int(offset)
    for b in base:  # mixed-radix digits of the offset
        digit, rest = divmod(rest, b)
        starts.append(digit)
    if rest or any(d >= int(n) for d, n in zip(starts, shape)):
        return None

    def assign(d, first):
        """Tensor dims for view dims d.. (each after ``first``), or None."""
        if d == len(size):
            return []
        for b in range(first, rank - (len(size) - d) + 1):
            n, s = int(size[d]), int(stride[d])
            step = 1 if n == 1 else s // base[b]
            if n > 1 and (s % base[b] or step <= 0 or starts[b] + (n - 1) * step >= int(shape[b])):
                continue
            tail = assign(d + 1, b + 1)
            if tail is not None:
                return [(b, step)] + tail
        return None

    found = assign(0, 0)
    if found is None:
        return None
    sizes, steps = [1] * rank, [1] * rank
    for d, (b, step) in enumerate(found):
        sizes[b], steps[b] = int(size[d]), step
    taken = {b for b, _ in found}
    return StridedSlice(starts, sizes, steps, [b for b in range(rank) if b not in taken])


def as_strided_plan(node):
    """How an ``as_strided`` node reads its input: ("same",), ("reshape",) or
    ("slice", StridedSlice); None for other restrides. The input's strides
    are those it had when it ran (its tensor_meta)."""
    source = node.args[0]
    snapshot = source.meta.get("tensor_meta") if isinstance(source, torch.fx.Node) else None
    if snapshot is None:
        return None
    size, stride = [int(n) for n in node.args[1]], [int(s) for s in node.args[2]]
    storage_offset = node.args[3] if len(node.args) > 3 else node.kwargs.get("storage_offset")
    own_offset = source.meta["val"].storage_offset() if "val" in source.meta else 0
    offset = own_offset if storage_offset is None else int(storage_offset)
    shape, strides = list(snapshot.shape), list(snapshot.stride)
    if offset == own_offset and size == shape and _same_strides(size, stride, strides):
        return ("same",)
    if not _same_strides(shape, strides, _contiguous_strides(shape)) or own_offset != 0:
        return None
    if offset == 0 and _numel(size) == _numel(shape) \
            and _same_strides(size, stride, _contiguous_strides(size)):
        return ("reshape",)
    found = strided_slice(shape, size, stride, offset)
    return None if found is None else ("slice", found)


@lowers(aten.as_strided.default)
def as_strided(ctx, x, size, stride, storage_offset=None):
    """The restrides that read a value's own elements: the same sizes and
    strides (adaptive_avg_pool2d's channels-last restride), a reshape of a
    contiguous input, or a strided slice of one (the backward of a write
    into a slice, autograd's CopySlices)."""
    how = as_strided_plan(ctx.node)
    if how is None:
        snapshot = ctx.node.args[0].meta.get("tensor_meta")
        raise Unsupported(f"as_strided to sizes {list(size)}, strides {list(stride)}, offset "
                          f"{storage_offset} of a tensor of sizes "
                          f"{list(snapshot.shape) if snapshot else '?'}, strides "
                          f"{list(snapshot.stride) if snapshot else '?'}: only restrides "
                          "that read the tensor's own elements as a view or slice")
    if how[0] == "same":
        return x
    if how[0] == "reshape":
        return reshape(ctx, x, tuple(int(n) for n in size), ctx.name)
    x, piece = ctx.tensor(x), how[1]
    if not piece.dropped:
        return extract_slice(ctx, x, piece.offsets, piece.sizes, piece.steps, ctx.name)
    sliced = extract_slice(ctx, x, piece.offsets, piece.sizes, piece.steps)
    return reshape(ctx, sliced, tuple(int(n) for n in size), ctx.name)


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
