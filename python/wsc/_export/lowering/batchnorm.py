"""nn.BatchNorm1d/2d/3d: aten.native_batch_norm and native_batch_norm_backward.

Every statistic is a plain sum over all dims but the channel dim, divided by
the compile-time count ``n = N*H*W`` at the traced batch size (as the
cross-entropy mean divides by N): the compiler turns batch-dim sums into
cross-system all-reduces, which gives SyncBatchNorm semantics. The formulas
follow PyTorch's CPU kernels:

  training: mean = sum(x)/n, var = sum((x-mean)^2)/n, invstd = 1/sqrt(var+eps);
            running_mean <- m*mean + (1-m)*running_mean,
            running_var  <- m*sum((x-mean)^2)/(n-1) + (1-m)*running_var (unbiased)
  eval:     mean, var = the running statistics (nothing is updated)
  output:   x*alpha + beta, alpha = invstd*weight, beta = bias - mean*alpha
  backward (training): dx = (dy - sum(dy)/n - (x-mean)*k) * invstd*weight,
            k = sum(dy*(x-mean)) * invstd^2 / n;  (eval): dx = dy * invstd*weight;
            dweight = sum(dy*(x-mean)) * invstd, dbias = sum(dy).

The running statistics are updated in place, as the aten op does: later uses
of those fx nodes (and the step's ``wsc.buffer_update`` results) see the new values.
"""

import torch

from ..emitter import Splat, Tensor, TensorType, affine_map, identity_map
from ..errors import Unsupported
from .inplace import update_in_place
from .nchw import channel_map, channelwise
from .registry import lowers

aten = torch.ops.aten


def _reduce_channels(ctx, operands, body, hint) -> Tensor:
    """``out[c] = sum over all dims but 1 of body(operands)``; operands are
    full-rank tensors or (C,) vectors."""
    rank = operands[0].type.rank
    out = TensorType((operands[0].type.shape[1],), "f32")
    init = ctx.fb.filled(0.0, out, hint)
    inputs = [(v.name, v.type, identity_map(rank) if v.type.rank == rank else channel_map(rank))
              for v in operands]
    name = ctx.fb.fresh(hint)
    ctx.fb.generic(name, inputs, out, ["parallel" if d == 1 else "reduction" for d in range(rank)],
                   lambda b: b.arith("addf", b.out, body(b, b.inputs), "f32"), init=init,
                   out_map=affine_map(rank, ["d1"]))
    return Tensor(name, out)


def _vector(ctx, operands, body, hint) -> Tensor:
    """A per-channel (C,) elementwise op; floats become constants."""
    out = next(v.type for v in operands if isinstance(v, Tensor))
    return channelwise(ctx, operands, body, out, ctx.fb.fresh(hint))


def _centered(b, x, mean):
    return b.arith("subf", x, mean, "f32")


def _square_of_centered(b, v):
    d = _centered(b, v[0], v[1])
    return b.arith("mulf", d, d, "f32")


def _inverse_std(ctx, var_sum, count, eps, hint) -> Tensor:
    """1 / sqrt(var_sum / count + eps), as PyTorch's InvStd."""
    def body(b, v):
        var = b.arith("divf", v[0], v[2], "f32") if len(v) == 3 else v[0]
        root = b.math("sqrt", b.arith("addf", var, v[1], "f32"))
        return b.arith("divf", b.const(1.0, "f32"), root, "f32")

    return _vector(ctx, [var_sum, float(eps)] + ([float(count)] if count != 1 else []), body, hint)


def _check(x):
    if x.type.rank < 2 or x.type.elem != "f32":
        raise Unsupported(f"batch norm of a {x.type}: expected a float32 (N, C, ...) tensor")


def _count(x) -> int:
    n = 1
    for d, size in enumerate(x.type.shape):
        n *= size if d != 1 else 1
    return n


@lowers(aten.native_batch_norm.default)
def native_batch_norm(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps):
    x = ctx.tensor(x)
    _check(x)
    hint, n = ctx.node.name, _count(x)
    if training:
        total = _reduce_channels(ctx, [x], lambda b, v: v[0], hint)
        mean = _vector(ctx, [total, float(n)], lambda b, v: b.arith("divf", v[0], v[1], "f32"),
                       hint)
        squares = _reduce_channels(ctx, [x, mean], _square_of_centered, hint)
        invstd = _inverse_std(ctx, squares, n, eps, hint)
        if running_mean is not None and running_var is not None:
            if n < 2:
                raise Unsupported("training batch norm with one value per channel")
            m = float(momentum)

            def ema(b, v):  # m * batch statistic + (1 - m) * running statistic
                return b.arith("addf", b.arith("mulf", b.const(m, "f32"), v[0], "f32"),
                               b.arith("mulf", b.const(1.0 - m, "f32"), v[1], "f32"), "f32")

            update_in_place(ctx, ctx.node.args[3], _vector(ctx, [mean, running_mean], ema, hint))
            unbiased = _vector(ctx, [squares, float(n - 1)],
                               lambda b, v: b.arith("divf", v[0], v[1], "f32"), hint)
            update_in_place(ctx, ctx.node.args[4], _vector(ctx, [unbiased, running_var], ema,
                                                           hint))
        saved = (mean, invstd)
    else:
        if running_mean is None or running_var is None:
            raise Unsupported("eval-mode batch norm without running statistics")
        mean = ctx.tensor(running_mean)
        invstd = _inverse_std(ctx, ctx.tensor(running_var), 1.0, eps, hint)
        saved = (Splat(0.0, TensorType((0,), "f32")),) * 2  # empty in eval mode
    alpha = invstd if weight is None else _vector(
        ctx, [invstd, ctx.tensor(weight)], lambda b, v: b.arith("mulf", v[0], v[1], "f32"), hint)

    def shift(b, v):  # bias - mean * alpha
        scaled = b.arith("mulf", v[0], v[1], "f32")
        return b.negf(scaled) if len(v) == 2 else b.arith("subf", v[2], scaled, "f32")

    beta = _vector(ctx, [mean, alpha] + ([] if bias is None else [ctx.tensor(bias)]), shift, hint)
    out = channelwise(ctx, [x, alpha, beta],
                      lambda b, v: b.arith("addf", b.arith("mulf", v[0], v[1], "f32"), v[2],
                                           "f32"), x.type, ctx.name)
    return (out,) + saved


@lowers(aten.native_batch_norm_backward.default)
def native_batch_norm_backward(ctx, g, x, weight, running_mean, running_var, save_mean,
                               save_invstd, train, eps, output_mask):
    g, x = ctx.tensor(g), ctx.tensor(x)
    _check(x)
    hint, n = ctx.node.name, _count(x)
    if train:
        mean, invstd = ctx.tensor(save_mean), ctx.tensor(save_invstd)
    else:
        mean = ctx.tensor(running_mean)
        invstd = _inverse_std(ctx, ctx.tensor(running_var), 1.0, eps, hint)
    grad_sum = _reduce_channels(ctx, [g], lambda b, v: v[0], hint)
    dot = _reduce_channels(ctx, [g, x, mean],
                           lambda b, v: b.arith("mulf", v[0], _centered(b, v[1], v[2]), "f32"),
                           hint)
    grad_input = None
    if output_mask[0]:
        scale = invstd if weight is None else _vector(
            ctx, [invstd, ctx.tensor(weight)], lambda b, v: b.arith("mulf", v[0], v[1], "f32"),
            hint)
        if train:
            # k = dot * invstd^2 / n and the mean gradient sum(dy) / n, per channel.
            k = _vector(ctx, [dot, invstd, float(n)], lambda b, v: b.arith(
                "divf", b.arith("mulf", b.arith("mulf", v[0], v[1], "f32"), v[1], "f32"), v[2],
                "f32"), hint)
            grad_mean = _vector(ctx, [grad_sum, float(n)],
                                lambda b, v: b.arith("divf", v[0], v[1], "f32"), hint)

            def body(b, v):
                dy, xv, mu, kk, gm, sc = v
                projected = b.arith("mulf", _centered(b, xv, mu), kk, "f32")
                centered = b.arith("subf", b.arith("subf", dy, gm, "f32"), projected, "f32")
                return b.arith("mulf", centered, sc, "f32")

            grad_input = channelwise(ctx, [g, x, mean, k, grad_mean, scale], body, x.type,
                                     ctx.fb.fresh(hint))
        else:
            grad_input = channelwise(ctx, [g, scale],
                                     lambda b, v: b.arith("mulf", v[0], v[1], "f32"), x.type,
                                     ctx.fb.fresh(hint))
    grad_weight = None
    if output_mask[1]:
        grad_weight = _vector(ctx, [dot, invstd], lambda b, v: b.arith("mulf", v[0], v[1], "f32"),
                              hint)
    return grad_input, grad_weight, grad_sum if output_mask[2] else None
