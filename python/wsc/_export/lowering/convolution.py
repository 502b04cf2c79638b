"""nn.Conv2d: aten.convolution and aten.convolution_backward (groups 1, dilation 1).

Forward: ``tensor.pad`` with zeros, ``linalg.conv_2d_nchw_fchw {strides}`` into
a zero-filled init, then the bias as a per-channel add (like mm + bias add).

Backward, all affine:
  grad input  = the output gradient dilated by the stride and padded for a
                full convolution (one strided ``tensor.insert_slice`` into
                zeros, or ``tensor.pad`` at stride 1), convolved at stride 1
                with the weight flipped in H, W and with F, C swapped (one
                generic, map ``(d0, d1, d2, d3) -> (d1, d0, KH-1-d2, KW-1-d3)``);
  grad weight = a generic contraction of the gradient with the padded input;
  grad bias   = the gradient summed over N, H, W.
"""

import torch

from ..emitter import Tensor, TensorType, affine_map
from ..errors import Unsupported
from .nchw import channelwise, extract, insert, pad, pair, zeros
from .reductions import reduce
from .registry import lowers

aten = torch.ops.aten


def _check(x, w, stride, padding, dilation, transposed, groups):
    """(stride, padding) pairs, or Unsupported for variants wsc does not lower."""
    if transposed:
        raise Unsupported("transposed convolution (ConvTranspose)")
    if x.type.rank != 4 or w.type.rank != 4:
        raise Unsupported(f"{x.type.rank - 2}-D convolution: only 2-D (Conv2d, NCHW) is supported")
    if x.type.elem != "f32" or w.type.elem != "f32":
        raise Unsupported("convolution of non-float tensors")
    if groups != 1:
        raise Unsupported(f"groups={groups}: only groups=1 is supported")
    if pair(dilation, "dilation") != (1, 1):
        raise Unsupported(f"dilation={list(pair(dilation, 'dilation'))}: only dilation=1 is "
                          "supported")
    return pair(stride, "stride"), pair(padding, "padding")


def conv2d(ctx, x: Tensor, w: Tensor, stride, out: TensorType, result: str) -> Tensor:
    """``linalg.conv_2d_nchw_fchw`` of an already padded input."""
    init = ctx.fb.filled(0.0, out, result[1:].split(".")[0])
    ctx.fb.emit(f"{result} = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, "
                f"strides = dense<[{stride[0]}, {stride[1]}]> : vector<2xi64>}} "
                f"ins({x.name}, {w.name} : {x.type}, {w.type}) outs({init} : {out}) -> {out}")
    return Tensor(result, out)


@lowers(aten.convolution.default)
def convolution(ctx, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    x, w = ctx.tensor(x), ctx.tensor(w)
    stride, padding = _check(x, w, stride, padding, dilation, transposed, groups)
    out = ctx.out_type()
    padded = pad(ctx, x, padding, padding, 0.0, ctx.node.name)
    conv = conv2d(ctx, padded, w, stride, out, ctx.name if bias is None
                  else ctx.fb.fresh(ctx.node.name))
    if bias is None:
        return conv
    return channelwise(ctx, [conv, ctx.tensor(bias)],
                       lambda b, v: b.arith("addf", v[0], v[1], "f32"), out, ctx.name)


def _flipped_transposed(ctx, w: Tensor, hint: str) -> Tensor:
    """``w'[c, f, a, b] = w[f, c, KH-1-a, KW-1-b]``."""
    f, c, kh, kw = w.type.shape
    out = TensorType((c, f, kh, kw), "f32")
    name = ctx.fb.fresh(hint)
    ctx.fb.generic(name, [(w.name, w.type, affine_map(4, ["d1", "d0", f"{kh - 1} - d2",
                                                          f"{kw - 1} - d3"]))],
                   out, ["parallel"] * 4, lambda b: b.inputs[0])
    return Tensor(name, out)


def _grad_input(ctx, g: Tensor, x: Tensor, w: Tensor, stride, padding, hint: str) -> Tensor:
    n, f, oh, ow = g.type.shape
    kernel = w.type.shape[2:]
    size = x.type.shape[2:]
    offset, full, crop = [], [], []
    for d in (0, 1):
        k, p = kernel[d], padding[d]
        if p <= k - 1:  # shift by the padding: the convolution yields just the interior
            offset.append(k - 1 - p)
            full.append(size[d] + k - 1)
            crop.append(0)
        else:  # convolve over the padded input, then cut the padding off
            offset.append(k - 1)
            full.append(size[d] + 2 * p + k - 1)
            crop.append(p)
    if stride == (1, 1):
        high = [full[d] - offset[d] - g.type.shape[2 + d] for d in (0, 1)]
        dilated = pad(ctx, g, offset, high, 0.0, hint)
    else:
        dilated = insert(ctx, g, zeros(ctx, TensorType((n, f, full[0], full[1]), "f32"), hint),
                         offset, stride, hint)
    flipped = _flipped_transposed(ctx, w, hint)
    conv_out = TensorType((n, x.type.shape[1], full[0] - kernel[0] + 1,
                           full[1] - kernel[1] + 1), "f32")
    grad = conv2d(ctx, dilated, flipped, (1, 1), conv_out, ctx.fb.fresh(hint))
    return extract(ctx, grad, crop, size, (1, 1), hint)


def _grad_weight(ctx, g: Tensor, x: Tensor, w: Tensor, stride, padding, hint: str) -> Tensor:
    """``gw[f, c, kh, kw] = sum_{n, oh, ow} g[n, f, oh, ow] * xp[n, c, oh*s+kh, ow*s+kw]``."""
    padded = pad(ctx, x, padding, padding, 0.0, hint)
    out = w.type
    init = ctx.fb.filled(0.0, out, hint)
    rows = f"d5 * {stride[0]} + d2" if stride[0] != 1 else "d5 + d2"
    cols = f"d6 * {stride[1]} + d3" if stride[1] != 1 else "d6 + d3"
    name = ctx.fb.fresh(hint)

    def body(b):
        return b.arith("addf", b.out, b.arith("mulf", b.inputs[0], b.inputs[1], "f32"), "f32")

    ctx.fb.generic(name, [(g.name, g.type, affine_map(7, ["d4", "d0", "d5", "d6"])),
                          (padded.name, padded.type, affine_map(7, ["d4", "d1", rows, cols]))],
                   out, ["parallel"] * 4 + ["reduction"] * 3, body, init=init,
                   out_map=affine_map(7, ["d0", "d1", "d2", "d3"]))
    return Tensor(name, out)


@lowers(aten.convolution_backward.default)
def convolution_backward(ctx, g, x, w, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    g, x, w = ctx.tensor(g), ctx.tensor(x), ctx.tensor(w)
    stride, padding = _check(x, w, stride, padding, dilation, transposed, groups)
    hint = ctx.node.name
    grad_input = _grad_input(ctx, g, x, w, stride, padding, hint) if output_mask[0] else None
    grad_weight = _grad_weight(ctx, g, x, w, stride, padding, hint) if output_mask[1] else None
    grad_bias = None
    if output_mask[2]:
        grad_bias = reduce(ctx, g, [0, 2, 3], False, 0.0,
                           lambda b, v, acc: b.arith("addf", v, acc, "f32"),
                           result=ctx.fb.fresh(hint))
    return grad_input, grad_weight, grad_bias
