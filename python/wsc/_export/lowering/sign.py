"""aten.sgn / aten.sign of float tensors (L1Loss's backward): 1, -1 or 0;
NaN gives 0, as on PyTorch's CPU."""

import torch

from ..errors import Unsupported
from .registry import lowers

aten = torch.ops.aten


@lowers(aten.sgn.default, aten.sign.default)
def sign(ctx, x):
    out = ctx.out_type()
    if out.elem != "f32":
        raise Unsupported(f"sign of a {out.elem} tensor")

    def body(b, v):
        zero = b.const(0.0, "f32")
        positive = b.cmp("ogt", v[0], zero, "f32")
        negative = b.cmp("olt", v[0], zero, "f32")
        below = b.select(negative, b.const(-1.0, "f32"), zero, "f32")
        return b.select(positive, b.const(1.0, "f32"), below, "f32")

    return ctx.elementwise([x], ["f32"], body)
