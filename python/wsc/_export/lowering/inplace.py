"""In-place aten ops (relu_, add_, ..) lowered as their functional twin.

make_fx records mutation as is (e.g. ``nn.ReLU(inplace=True)`` gives
``aten.relu_``). The result simply replaces the mutated value for every later
use, which is exact unless another view aliases the mutated tensor; that case
is rejected. Where the functional op returns another dtype (``x.gt_(0)`` on
floats), its result is converted to the mutated tensor's.

Ops that are decomposed while tracing (capture.DECOMPOSITIONS: silu,
hardswish, ..) have no lowering to pair with; their in-place twins
(``nn.SiLU(inplace=True)`` gives ``aten.silu_``) are decomposed too, into the
functional op and an ``aten.copy_`` into the first argument, which lowers
like any other in-place op.

In-place view ops (``squeeze_``, ``unsqueeze_``, ``t_``, ..) also change the
shape of the fake tensor make_fx recorded for the node that produced their
argument; ``restore_traced_shapes`` puts back the shape each node had when it
ran (at::matmul of a vector and a matrix is ``mm(v.unsqueeze(0), W).squeeze_(0)``).
"""

import torch
import torch.fx

from ..emitter import Splat
from ..errors import Unsupported
from . import view_writes
from .registry import LOWERINGS, convert_scalar

aten = torch.ops.aten

# Ops whose result shares storage with their first argument.
VIEW_OPS = {
    aten.view.default, aten._unsafe_view.default, aten.t.default, aten.transpose.int,
    aten.permute.default, aten.expand.default, aten.squeeze.dim, aten.squeeze.default,
    aten.unsqueeze.default, aten.alias.default, aten.detach.default, aten.slice.Tensor,
    aten.select.int, aten.as_strided.default, aten._reshape_alias.default,
    aten.unbind.int,
}


def _aliased(target, mutation) -> bool:
    """Whether another live tensor shares storage with ``target``.

    A view is harmless when its base feeds nothing but that view (e.g.
    ``zeros_like(m).detach().masked_fill_(..)`` in nn.MultiheadAttention).
    """
    if any(user.target in VIEW_OPS and user is not mutation for user in target.users):
        return True
    if getattr(target, "target", None) not in VIEW_OPS:
        return False
    base = target.args[0]
    return not hasattr(base, "users") or list(base.users) != [target] or _aliased(base, target)


def _inplace(functional, op):
    def lower(ctx, *args, **kwargs):
        target = ctx.node.args[0]
        write = None
        if _aliased(target, ctx.node):  # a slice of a tensor that is read again
            write = view_writes.plan(ctx.node, VIEW_OPS)
            if write is None:
                raise Unsupported("in-place update of a tensor that has views")
        own = _functional_result(op, ctx.node)
        ctx.functional = op  # lowerings that dispatch on the op see the functional one
        try:
            if own is None or own.dtype == ctx.node.meta["val"].dtype:
                result = functional(ctx, *args, **kwargs)
            else:  # e.g. x.gt_(0) on floats: the comparison's i1, stored as x's dtype
                stored, ctx.node.meta["val"] = ctx.node.meta["val"], own
                try:
                    result = functional(ctx, *args, **kwargs)
                finally:
                    ctx.node.meta["val"] = stored
                result = _converted(ctx, result)
        finally:
            ctx.functional = None
        ctx.values[target] = result  # later uses of the mutated tensor see the update
        if write is not None:
            view_writes.write_back(ctx, write, result)
        return result

    return lower


def _functional_result(op, node):
    """What the functional ``op`` returns for the in-place node's arguments,
    as a meta tensor (None when torch cannot tell)."""
    def meta(a):
        if isinstance(a, torch.fx.Node) and isinstance(a.meta.get("val"), torch.Tensor):
            return torch.empty(tuple(a.meta["val"].shape), dtype=a.meta["val"].dtype,
                               device="meta")
        return a

    try:
        out = op(*[meta(a) for a in node.args], **{k: meta(v) for k, v in node.kwargs.items()})
    except Exception:  # noqa: BLE001 (no meta kernel: lower as the in-place op's type)
        return None
    return out if isinstance(out, torch.Tensor) else None


def _converted(ctx, value):
    """``value`` converted to the in-place node's (the mutated tensor's) type."""
    out = ctx.out_type()
    if isinstance(value, Splat):
        return Splat(convert_scalar(value.value, out.elem), out)
    return ctx.elementwise([value], [value.type.elem],
                           lambda b, v: b.cast(v[0], value.type.elem, out.elem),
                           out_type=out, result=ctx.fb.fresh(ctx.node.name))


# In-place twins whose overload is named differently from the functional op's.
_RENAMED_TWINS = {
    aten.transpose_.default: aten.transpose.int,
    aten.pow_.Scalar: aten.pow.Tensor_Scalar,
    aten.pow_.Tensor: aten.pow.Tensor_Tensor,
}


def register_inplace_variants():
    """Give every lowered ``aten.op.overload`` its ``aten.op_.overload`` twin."""
    for op, fn in list(LOWERINGS.items()):
        packet = getattr(aten, op.overloadpacket.__name__ + "_", None)
        inplace = getattr(packet, op._overloadname, None) if packet is not None else None
        if inplace is not None and inplace not in LOWERINGS:
            LOWERINGS[inplace] = _inplace(fn, op)
    for inplace, op in _RENAMED_TWINS.items():
        if op in LOWERINGS and inplace not in LOWERINGS:
            LOWERINGS[inplace] = _inplace(LOWERINGS[op], op)


def with_inplace_variants(table: dict) -> dict:
    """``table`` (aten op -> decomposition) plus ``op_`` for every decomposed
    ``op`` that has an in-place twin: ``self.copy_(op(self, ..))``."""
    result = dict(table)
    for op in table:
        if not isinstance(op, torch._ops.OpOverload):
            continue
        packet = getattr(aten, op.overloadpacket.__name__ + "_", None)
        inplace = getattr(packet, op._overloadname, None) if packet is not None else None
        if inplace is not None and inplace not in result:
            result[inplace] = _functional_then_copy(op)
    return result


def _functional_then_copy(functional):
    def decomposition(self, *args, **kwargs):
        return self.copy_(functional(self, *args, **kwargs))

    return decomposition


def update_in_place(ctx, target, value):
    """Record that the current op overwrote fx node ``target`` with ``value``
    (e.g. native_batch_norm's running statistics)."""
    if _aliased(target, ctx.node):
        raise Unsupported("in-place update of a tensor that has views")
    ctx.values[target] = value


def restore_traced_shapes(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Undo what in-place view ops did to recorded shapes: every node's
    ``meta["val"]`` gets the shape the node's result had when it ran.

    make_fx stores the same fake tensor object in ``meta["val"]`` of the
    producer and of the in-place op, so ``y = mm(..); y.squeeze_(0)`` leaves
    ``mm`` with the squeezed shape; ``meta["tensor_meta"]`` is the snapshot
    taken when the node ran. Call right after tracing, before any pass adds
    nodes (their ``tensor_meta`` may be copied from another node).
    """
    for node in gm.graph.nodes:
        val, snapshot = node.meta.get("val"), node.meta.get("tensor_meta")
        if isinstance(val, torch.Tensor) and snapshot is not None \
                and tuple(val.shape) != tuple(snapshot.shape):
            node.meta["val"] = torch.empty(tuple(snapshot.shape), dtype=snapshot.dtype,
                                           device="meta")
    return gm
