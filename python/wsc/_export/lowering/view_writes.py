"""In-place writes into a slice of another tensor, made functional.

``mask[h0:h1, w0:w1] = count`` (swin's shifted-window mask) traces as
``slice``, ``slice`` and ``fill_`` on the last view. The write changes the
base tensor: every later reader of ``mask`` sees it. Lowered, the updated
slice is put back with one ``tensor.insert_slice`` into the base's current
value, and later readers of the base get the result.

That is exact when nothing else still holds an older view: every view in
the chain from the base to the written slice feeds only the next one, and
no other view of the base taken before the write is read after it. Other
cases, and views that are not slices or selects, stay refused.
"""

from typing import List, Optional

import torch
import torch.fx

from ..emitter import Tensor
from .slicing import _bounds, as_strided_plan, insert_slice
from .shapes import reshape

aten = torch.ops.aten

_SLICES = (aten.slice.Tensor, aten.select.int, aten.as_strided.default)
_TRANSPARENT = (aten.alias.default, aten.detach.default)


class SliceWrite:
    """Where a write into ``target`` lands in its base: per base dim an
    (offset, stride), and the base dims that a select dropped."""

    def __init__(self, base: torch.fx.Node, offsets, strides, dropped):
        self.base, self.offsets, self.strides, self.dropped = base, offsets, strides, dropped


def _chain(target: torch.fx.Node) -> Optional[List[torch.fx.Node]]:
    """The views from the base down to ``target`` (base first), or None when one
    of them is not a slice, a select or an alias."""
    chain = [target]
    node = target
    while node.op == "call_function" and (node.target in _SLICES or node.target in _TRANSPARENT):
        node = node.args[0]
        chain.append(node)
    chain.reverse()
    if len(chain) < 2 or not isinstance(chain[0], torch.fx.Node):
        return None
    return chain


def _order(graph: torch.fx.Graph) -> dict:
    return {node: i for i, node in enumerate(graph.nodes)}


def _read_after(node: torch.fx.Node, position: int, order: dict, views) -> bool:
    """Whether ``node`` or a view of it is read after graph position ``position``."""
    for user in node.users:
        if user.target in views:
            if _read_after(user, position, order, views):
                return True
        elif order[user] > position:
            return True
    return False


def plan(mutation: torch.fx.Node, views) -> Optional[SliceWrite]:
    """The functional form of ``mutation``'s write into its first argument, a
    slice of another tensor; None when it cannot be made exact."""
    chain = _chain(mutation.args[0])
    if chain is None:
        return None
    base = chain[0]
    for node, nxt in zip(chain[1:-1], chain[2:]):
        if list(node.users) != [nxt]:
            return None  # an intermediate view read elsewhere would keep its old value
    order = _order(mutation.graph)
    here = order[mutation]
    for user in base.users:
        if user is not chain[1] and user.target in views and order[user] < here \
                and _read_after(user, here, order, views):
            return None  # an older view of the base is read after the write
    shape = list(base.meta["val"].shape)
    offsets, strides = [0] * len(shape), [1] * len(shape)
    dims, dropped = list(range(len(shape))), []
    for node in chain[1:]:
        if node.target in _TRANSPARENT:
            continue
        if node.target is aten.as_strided.default:  # storage strides: on the base only
            how = as_strided_plan(node)
            if node is not chain[1] or how is None or how[0] != "slice":
                return None
            offsets, strides = list(how[1].offsets), list(how[1].steps)
            dropped = list(how[1].dropped)
            dims = [b for b in dims if b not in dropped]
            continue
        dim = node.args[1] if len(node.args) > 1 else 0
        dim %= len(dims)
        b = dims[dim]
        size = node.args[0].meta["val"].shape[dim]
        if node.target is aten.select.int:
            start, step = int(node.args[2]) % size, 1
            dims.pop(dim)
            dropped.append(b)
        else:
            args = list(node.args) + [None] * 5
            start, _, step = _bounds(size, args[2], args[3], args[4] or 1)
        offsets[b] += start * strides[b]
        strides[b] *= step
    return SliceWrite(base, offsets, strides, dropped)


def write_back(ctx, write: SliceWrite, value) -> Tensor:
    """Insert ``value`` (the written slice's new value) into the base's current
    value; later readers of the base see the result."""
    base = ctx.tensor(ctx.values[write.base])
    piece = ctx.tensor(value)
    if write.dropped:  # a select dropped these base dims: put them back as ones
        shape: List[int] = list(piece.type.shape)
        for b in sorted(write.dropped):
            shape.insert(b, 1)
        piece = ctx.tensor(reshape(ctx, piece, tuple(shape), ctx.fb.fresh(ctx.node.name)))
    updated = insert_slice(ctx, piece, base, write.offsets, write.strides)
    ctx.values[write.base] = updated
    return updated

