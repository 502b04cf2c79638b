"""nn.Conv1d, nn.Conv2d, nn.ConvTranspose1d/2d: aten.convolution and
aten.convolution_backward, any stride, padding, dilation and groups.

Each lowers onto the three formulations of conv_kernels.py, on NCHW tensors
(a 1-D convolution is a 2-D one over an ``(N, C, 1, W)`` view, by
``tensor.expand_shape``):

  convolution          = correlate(pad(x), w) + bias (a per-channel add)
    backward           : input_grad(g, w), weight_grad(g, pad(x)), bias = sum of g
  transposed forward   = input_grad(x, w) at the output size + bias
    backward           : grad x = correlate(pad(g), w), grad w = weight_grad(x, pad(g))

A transposed convolution is the input gradient of the convolution with the
same weight, so its weight ``(C_in, C_out/G, K..)`` plays that
convolution's ``(F, C/G, K..)``; ``output_padding`` only makes the output
(that convolution's input) larger, and rows no window reaches get zeros.
"""

import torch

from ..emitter import Tensor, TensorType
from ..errors import Unsupported
from .conv_kernels import Geometry, correlate, input_grad, weight_grad
from .nchw import channelwise, pad
from .reductions import reduce
from .registry import lowers
from .shapes import reshape

aten = torch.ops.aten


def _pair(value, what: str, one_d: bool):
    """An (h, w) pair from torch's int list; 1-D windows get h = ``(1 or 0)``."""
    values = [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
    rank = 1 if one_d else 2
    if len(values) == 1:
        values = values * rank
    if len(values) != rank:
        raise Unsupported(f"{what}={values} for a {rank}-D convolution")
    if one_d:
        return (1 if what in ("stride", "dilation") else 0, values[0])
    return tuple(values)


def _geometry(x: Tensor, w: Tensor, stride, padding, dilation, groups):
    """(Geometry, whether 1-D), or Unsupported. (A transposed convolution's
    output_padding shows in its output's shape, which is all it changes.)"""
    if x.type.rank not in (3, 4) or w.type.rank != x.type.rank:
        raise Unsupported(f"{x.type.rank - 2}-D convolution: only 1-D (NCW) and 2-D (NCHW) "
                          "are supported")
    if x.type.elem != "f32" or w.type.elem != "f32":
        raise Unsupported("convolution of non-float tensors")
    one_d = x.type.rank == 3
    geo = Geometry(_pair(stride, "stride", one_d), _pair(padding, "padding", one_d),
                   _pair(dilation, "dilation", one_d), int(groups))
    return geo, one_d


def _as_2d(ctx, t: Tensor, one_d: bool) -> Tensor:
    """``(N, C, W)`` as ``(N, C, 1, W)`` (weights alike)."""
    if not one_d or t is None:
        return t
    shape = t.type.shape
    return reshape(ctx, t, shape[:2] + (1,) + shape[2:], result=ctx.fb.fresh(ctx.node.name))


def _as_1d(ctx, t: Tensor, one_d: bool, result: str = None) -> Tensor:
    if not one_d or t is None:
        return t
    shape = t.type.shape
    return reshape(ctx, t, shape[:2] + shape[3:], result=result or ctx.fb.fresh(ctx.node.name))


def _plus_bias(ctx, value: Tensor, bias, result: str) -> Tensor:
    if bias is None:
        return value
    return channelwise(ctx, [value, ctx.tensor(bias)],
                       lambda b, v: b.arith("addf", v[0], v[1], "f32"), value.type, result)


def _bias_grad(ctx, g: Tensor, hint: str) -> Tensor:
    return reduce(ctx, g, [0, 2, 3], False, 0.0, lambda b, v, acc: b.arith("addf", v, acc, "f32"),
                  result=ctx.fb.fresh(hint))


@lowers(aten.convolution.default)
def convolution(ctx, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    x, w = ctx.tensor(x), ctx.tensor(w)
    geo, one_d = _geometry(x, w, stride, padding, dilation, groups)
    x, w = _as_2d(ctx, x, one_d), _as_2d(ctx, w, one_d)
    hint = ctx.node.name
    out = ctx.out_type()
    out2 = TensorType(out.shape[:2] + (1,) + out.shape[2:], "f32") if one_d else out
    if transposed:
        value = input_grad(ctx, x, w, out2.shape[2:], geo, hint)
    else:
        padded = pad(ctx, x, geo.padding, geo.padding, 0.0, hint)
        value = correlate(ctx, padded, w, geo, out2, ctx.name if bias is None and not one_d
                          else ctx.fb.fresh(hint))
    value = _plus_bias(ctx, value, bias, ctx.fb.fresh(hint) if one_d else ctx.name)
    return _as_1d(ctx, value, one_d, ctx.name)


@lowers(aten.convolution_backward.default)
def convolution_backward(ctx, g, x, w, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    g, x, w = ctx.tensor(g), ctx.tensor(x), ctx.tensor(w)
    geo, one_d = _geometry(x, w, stride, padding, dilation, groups)
    g, x, w = (_as_2d(ctx, t, one_d) for t in (g, x, w))
    hint = ctx.node.name
    grad_input = grad_weight = grad_bias = None
    if transposed:  # the roles of input and output gradient swap
        padded = pad(ctx, g, geo.padding, geo.padding, 0.0, hint)
        if output_mask[0]:
            grad_input = correlate(ctx, padded, w, geo, x.type, ctx.fb.fresh(hint))
        if output_mask[1]:
            grad_weight = weight_grad(ctx, x, padded, w.type, geo, hint)
    else:
        if output_mask[0]:
            grad_input = input_grad(ctx, g, w, x.type.shape[2:], geo, hint)
        if output_mask[1]:
            grad_weight = weight_grad(ctx, g, pad(ctx, x, geo.padding, geo.padding, 0.0, hint),
                                      w.type, geo, hint)
    if output_mask[2]:
        grad_bias = _bias_grad(ctx, g, hint)
    return _as_1d(ctx, grad_input, one_d), _as_1d(ctx, grad_weight, one_d), grad_bias
