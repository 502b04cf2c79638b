"""Tensor factories (zeros_like, full, scalar_tensor, ..) -> lazy splats.

A splat costs nothing until an op needs it as a real tensor; elementwise ops
fold it into their body as a scalar constant.
"""

import torch

from ..emitter import Splat
from .registry import convert_scalar, lowers

aten = torch.ops.aten


def _splat(ctx, value):
    out = ctx.out_type()
    return Splat(convert_scalar(value, out.elem), out)


@lowers(aten.zeros.default, aten.zeros_like.default, aten.new_zeros.default,
        aten.empty.memory_format, aten.empty_like.default, aten.new_empty.default,
        aten.new_empty_strided.default,
        aten.zero.default)
def zeros(ctx, *args, **kwargs):
    # empty*: the values are unspecified, zero is as good as any.
    return _splat(ctx, 0)


@lowers(aten.ones.default, aten.ones_like.default, aten.new_ones.default)
def ones(ctx, *args, **kwargs):
    return _splat(ctx, 1)


@lowers(aten.full.default, aten.full_like.default, aten.fill.Scalar)
def full(ctx, first, value, *args, **kwargs):
    return _splat(ctx, value)


@lowers(aten.fill.Tensor)
def fill_tensor(ctx, like, value):
    """Every element set to a 0-d tensor's value (``t[a:b] = count`` in place)."""
    out = ctx.out_type()
    if isinstance(value, Splat):
        return Splat(value.value, out)
    return ctx.elementwise([value], [out.elem], lambda b, v: v[0], out_type=out)


@lowers(aten.new_full.default)
def new_full(ctx, like, size, value, *args, **kwargs):
    return _splat(ctx, value)


@lowers(aten.scalar_tensor.default)
def scalar_tensor(ctx, value, *args, **kwargs):
    return _splat(ctx, value)
