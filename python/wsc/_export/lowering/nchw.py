"""Helpers for NCHW tensors shared by convolution.py, pooling.py and batchnorm.py.

Everything stays static and affine: padding is ``tensor.pad``, a strided
window position is a strided ``tensor.extract_slice`` / ``insert_slice``, and
per-channel vectors are read through the map ``(d0, d1, ..) -> (d1)``.
"""

from typing import Callable, List, Sequence, Tuple

from ..emitter import Body, Tensor, TensorType, affine_map, identity_map
from ..errors import Unsupported

Pair = Tuple[int, int]


def pair(value, what: str, default=None) -> Pair:
    """An (h, w) pair from an int or a 1- or 2-element list (torch's conventions)."""
    if isinstance(value, (list, tuple)):
        if len(value) == 0 and default is not None:
            return default
        if len(value) == 1:
            value = (value[0], value[0])
        if len(value) != 2:
            raise Unsupported(f"{what}={list(value)}: only 2-D windows are supported")
        return int(value[0]), int(value[1])
    return int(value), int(value)


def check_nchw(x: Tensor, what: str):
    if x.type.rank != 4 or x.type.elem != "f32":
        raise Unsupported(f"{what} of a {x.type}: only float32 NCHW (4-D) tensors are supported")


def spatial_type(like: TensorType, hw: Sequence[int], channels: int = None) -> TensorType:
    n, c = like.shape[:2]
    return TensorType((n, c if channels is None else channels, int(hw[0]), int(hw[1])), like.elem)


def pad(ctx, x: Tensor, low: Pair, high: Pair, value: float, hint: str) -> Tensor:
    """Pad H and W with a constant (a no-op without padding)."""
    if not any(low) and not any(high):
        return x
    name = ctx.fb.fresh(hint)
    out = ctx.fb.pad(name, x.name, x.type, (0, 0) + tuple(low), (0, 0) + tuple(high), value)
    return Tensor(name, out)


def extract(ctx, x: Tensor, offsets: Pair, sizes: Pair, strides: Pair, hint: str) -> Tensor:
    """``x[:, :, oh::sh, ow::sw]`` with ``sizes`` rows/columns (a no-op for all of x)."""
    n, c, h, w = x.type.shape
    if tuple(offsets) == (0, 0) and tuple(sizes) == (h, w):
        return x
    name = ctx.fb.fresh(hint)
    out = ctx.fb.extract_slice(name, x.name, x.type, (0, 0) + tuple(offsets),
                               (n, c) + tuple(sizes), (1, 1) + tuple(strides))
    return Tensor(name, out)


def insert(ctx, src: Tensor, dest: Tensor, offsets: Pair, strides: Pair, hint: str) -> Tensor:
    """``dest`` with ``dest[:, :, oh::sh, ow::sw] = src`` (``src`` itself when it covers dest)."""
    if src.type == dest.type and tuple(offsets) == (0, 0):
        return src
    name = ctx.fb.fresh(hint)
    ctx.fb.insert_slice(name, src.name, src.type, dest.name, dest.type,
                        (0, 0) + tuple(offsets), (1, 1) + tuple(strides))
    return Tensor(name, dest.type)


def add_into(ctx, acc: Tensor, value: Tensor, offsets: Pair, strides: Pair, hint: str) -> Tensor:
    """``acc[:, :, oh::sh, ow::sw] += value``: extract, add, insert back.

    Within one call the strided positions are distinct, so this is a scatter-add
    with no collisions, expressed without scatter ops.
    """
    part = extract(ctx, acc, offsets, value.type.shape[2:], strides, hint)
    summed = add(ctx, part, value, ctx.fb.fresh(hint))
    return insert(ctx, summed, acc, offsets, strides, hint)


def add(ctx, a: Tensor, b: Tensor, result: str) -> Tensor:
    return ctx.elementwise([a, b], ["f32", "f32"],
                           lambda body, v: body.arith("addf", v[0], v[1], "f32"),
                           out_type=a.type, result=result)


def zeros(ctx, type: TensorType, hint: str) -> Tensor:
    return Tensor(ctx.fb.filled(0.0 if type.elem == "f32" else 0, type, hint), type)


def channel_map(rank: int = 4) -> str:
    """Loops over an NC.. tensor -> a per-channel (C,) operand."""
    return affine_map(rank, ["d1"])


def channelwise(ctx, operands: Sequence, body: Callable[[Body, List[str]], str],
                out_type: TensorType, result: str) -> Tensor:
    """A parallel generic over ``out_type``: full-rank tensors are read as is,
    (C,) tensors per channel, Python floats become body constants."""
    rank = out_type.rank
    inputs, plan = [], []
    for v in operands:
        if isinstance(v, Tensor):
            full = v.type.rank == rank
            if not full and v.type.rank != 1:
                raise Unsupported(f"operand {v.type} is neither full nor per-channel")
            plan.append(len(inputs))
            inputs.append((v.name, v.type, identity_map(rank) if full else channel_map(rank)))
        else:
            plan.append(float(v))

    def build(b: Body) -> str:
        return body(b, [b.inputs[x] if isinstance(x, int) else b.const(x, "f32") for x in plan])

    ctx.fb.generic(result, inputs, out_type, ["parallel"] * rank, build)
    return Tensor(result, out_type)
