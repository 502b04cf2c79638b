"""nn.MaxPool2d, nn.AvgPool2d, nn.AdaptiveAvgPool2d: forward and backward.

Forward: ``tensor.pad`` (-inf for max, 0 for sums) and ``linalg.pooling_nchw_max``
or ``pooling_nchw_sum``; averages then divide by compile-time constants (a
scalar, or a dense table where windows overlap the border differently).

Adaptive pooling whose output size does not divide the input (VGG's 7x7 head
on a 1x1 map, 5 -> 3) has bins of several sizes that may overlap: its sums
are one contraction with constant 0/1 bin-membership matrices, per axis
(``Mh[i, h] = 1`` where row h lies in bin i), and its backward the same
contraction transposed.

Max-pool backward routes each output gradient to the FIRST maximal element of
its window in raster order, as PyTorch's kernel does (ties are common after
ReLU). The indices are never materialised: one pass per window offset
``(kh, kw)`` in raster order compares the strided input slice with the pooled
values, masked by a running "already taken" mask, and adds the selected
gradients into a strided slice of the input gradient.
"""

import numpy as np
import torch

from ..emitter import Tensor, TensorType, affine_map, dense_literal
from ..errors import Unsupported
from .nchw import add_into, channelwise, check_nchw, extract, insert, pad, pair, zeros
from .registry import lowers
from .shapes import reshape

aten = torch.ops.aten

_NEG_INF = float("-inf")


class PoolIndices:
    """What max_pool2d_with_indices' indices lower to: a reference to the pooled
    values, from which the backward recomputes the routing."""

    __slots__ = ("values", "source", "geometry")

    def __init__(self, values: Tensor, source: Tensor, geometry):
        self.values, self.source, self.geometry = values, source, geometry

    def __repr__(self):
        return "max-pool indices (return_indices=True; only the pooling's backward may use them)"

    def __getattr__(self, name):  # any other use, e.g. a view of the indices
        raise Unsupported(repr(self))


def _geometry(kernel, stride, padding, dilation=1):
    k = pair(kernel, "kernel_size")
    return k, pair(stride, "stride", default=k), pair(padding, "padding"), pair(dilation, "dilation")


def _pooled_type(x: Tensor, geometry, ceil_mode) -> TensorType:
    """PyTorch's pooling output shape (tuple-valued fx nodes carry no shape)."""
    k, s, p, d = geometry
    size = []
    for i in (0, 1):
        span = x.type.shape[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1
        n = (span + (s[i] - 1 if ceil_mode else 0)) // s[i] + 1
        if ceil_mode and (n - 1) * s[i] >= x.type.shape[2 + i] + p[i]:
            n -= 1  # the last window must start inside the input or its left padding
        size.append(n)
    return TensorType(x.type.shape[:2] + tuple(size), x.type.elem)


def _high_padding(size, out_size, k, s, p, d):
    """Zeros/-inf needed after the input so that every window fits (ceil_mode)."""
    return tuple(max(0, (out_size[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - size[i] - p[i])
                 for i in (0, 1))


def _pool(ctx, kind, x: Tensor, geometry, out: TensorType, result: str) -> Tensor:
    k, s, p, d = geometry
    init_value = _NEG_INF if kind == "max" else 0.0
    high = _high_padding(x.type.shape[2:], out.shape[2:], k, s, p, d)
    padded = pad(ctx, x, p, high, init_value, result[1:].split(".")[0])
    init = ctx.fb.filled(init_value, out, result[1:].split(".")[0])
    window = ctx.fb.empty(TensorType(k, "f32"), "window")
    ctx.fb.emit(f"{result} = linalg.pooling_nchw_{kind} {{dilations = dense<[{d[0]}, {d[1]}]> : "
                f"vector<2xi64>, strides = dense<[{s[0]}, {s[1]}]> : vector<2xi64>}} "
                f"ins({padded.name}, {window} : {padded.type}, {TensorType(k, 'f32')}) "
                f"outs({init} : {out}) -> {out}")
    return Tensor(result, out)


# ------------------------------------------------------------------ max


@lowers(aten.max_pool2d_with_indices.default)
def max_pool2d_with_indices(ctx, x, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    x = ctx.tensor(x)
    check_nchw(x, "max pooling")
    geometry = _geometry(kernel_size, stride, padding, dilation)
    values = _pool(ctx, "max", x, geometry, _pooled_type(x, geometry, ceil_mode),
                   ctx.fb.fresh(ctx.node.name))
    return values, PoolIndices(values, x, geometry)


@lowers(aten.max_pool2d.default)
def max_pool2d(ctx, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    x = ctx.tensor(x)
    check_nchw(x, "max pooling")
    return _pool(ctx, "max", x, _geometry(kernel_size, stride, padding, dilation),
                 ctx.out_type(), ctx.name)


def _valid_outputs(size, out_size, s, p, d, offset):
    """(first output, count) whose window offset ``offset`` lands inside the input."""
    shift = offset * d - p  # the input position output 0 reads at this offset
    first = (-shift + s - 1) // s if shift < 0 else 0
    last = min(out_size - 1, (size - 1 - shift) // s)
    return first, last - first + 1


@lowers(aten.max_pool2d_with_indices_backward.default)
def max_pool2d_with_indices_backward(ctx, g, x, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    g, x = ctx.tensor(g), ctx.tensor(x)
    check_nchw(x, "max pooling")
    geometry = _geometry(kernel_size, stride, padding, dilation)
    if not isinstance(indices, PoolIndices) or indices.source is not x or \
            indices.geometry != geometry:
        raise Unsupported("indices that are not those of max_pool2d_with_indices of the same "
                          "input")
    k, s, p, d = geometry
    hint = ctx.node.name
    size, out_size = x.type.shape[2:], g.type.shape[2:]
    grad = zeros(ctx, x.type, hint)
    taken = None  # i1 over the outputs: has an earlier window offset claimed the gradient?
    offsets = [(a, b) for a in range(k[0]) for b in range(k[1])]
    for i, offset in enumerate(offsets):
        rows = _valid_outputs(size[0], out_size[0], s[0], p[0], d[0], offset[0])
        cols = _valid_outputs(size[1], out_size[1], s[1], p[1], d[1], offset[1])
        if rows[1] <= 0 or cols[1] <= 0:
            continue
        box, count = (rows[0], cols[0]), (rows[1], cols[1])
        start = tuple(box[j] * s[j] + offset[j] * d[j] - p[j] for j in (0, 1))
        window = extract(ctx, x, start, count, s, hint)
        pooled = extract(ctx, indices.values, box, count, (1, 1), hint)
        mask_type = TensorType(window.type.shape, "i1")
        operands = [window, pooled]
        if taken is not None:
            operands.append(extract(ctx, taken, box, count, (1, 1), hint))

        def first_max(b, v):
            hit = b.cmp("oeq", v[0], v[1], "f32")
            if len(v) == 3:
                hit = b.arith("andi", hit, b.arith("xori", v[2], b.const(True, "i1"), "i1"), "i1")
            return hit

        hit = channelwise(ctx, operands, first_max, mask_type, ctx.fb.fresh(hint))
        part = extract(ctx, grad, start, count, s, hint)
        routed = channelwise(
            ctx, [part, hit, extract(ctx, g, box, count, (1, 1), hint)],
            lambda b, v: b.arith("addf", v[0], b.select(v[1], v[2], b.const(0.0, "f32"), "f32"),
                                 "f32"), part.type, ctx.fb.fresh(hint))
        grad = insert(ctx, routed, grad, start, s, hint)
        if i == len(offsets) - 1:
            break
        if taken is None:
            taken = insert(ctx, hit, zeros(ctx, TensorType(g.type.shape, "i1"), hint), box,
                           (1, 1), hint)
        else:
            seen = extract(ctx, taken, box, count, (1, 1), hint)
            now = channelwise(ctx, [seen, hit], lambda b, v: b.arith("ori", v[0], v[1], "i1"),
                              mask_type, ctx.fb.fresh(hint))
            taken = insert(ctx, now, taken, box, (1, 1), hint)
    return grad


# ------------------------------------------------------------------ average


def _avg_divisor(size, out_size, k, s, p, count_include_pad, divisor_override):
    """PyTorch's per-output divisor (avg_pool2d CPU kernel), as a float or an (OH, OW) table."""
    if divisor_override:
        return float(divisor_override)
    table = np.zeros(out_size, dtype=np.float32)
    for oh in range(out_size[0]):
        for ow in range(out_size[1]):
            h0, w0 = oh * s[0] - p[0], ow * s[1] - p[1]
            h1, w1 = min(h0 + k[0], size[0] + p[0]), min(w0 + k[1], size[1] + p[1])
            if count_include_pad:
                table[oh, ow] = (h1 - h0) * (w1 - w0)
            else:
                table[oh, ow] = (min(h1, size[0]) - max(h0, 0)) * (min(w1, size[1]) - max(w0, 0))
    return float(table.flat[0]) if (table == table.flat[0]).all() else table


def _divide(ctx, x: Tensor, divisor, result: str) -> Tensor:
    if isinstance(divisor, float):
        return channelwise(ctx, [x, divisor], lambda b, v: b.arith("divf", v[0], v[1], "f32"),
                           x.type, result)
    table = Tensor(ctx.fb.fresh("divisor"), TensorType(divisor.shape, "f32"))
    ctx.fb.emit(f"{table.name} = arith.constant {dense_literal(divisor)} : {table.type}")
    return ctx.elementwise([x, table], ["f32", "f32"],
                           lambda b, v: b.arith("divf", v[0], v[1], "f32"),
                           out_type=x.type, result=result)


def _avg_pool(ctx, x, geometry, count_include_pad, divisor_override, out, result):
    x = ctx.tensor(x)
    check_nchw(x, "average pooling")
    k, s, p, _ = geometry
    divisor = _avg_divisor(x.type.shape[2:], out.shape[2:], k, s, p, count_include_pad,
                           divisor_override)
    summed = _pool(ctx, "sum", x, geometry, out, ctx.fb.fresh(ctx.node.name))
    return _divide(ctx, summed, divisor, result)


def _avg_pool_backward(ctx, g, x, geometry, count_include_pad, divisor_override):
    """Every input gets the (divided) gradients of the windows that contain it."""
    g, x = ctx.tensor(g), ctx.tensor(x)
    check_nchw(x, "average pooling")
    k, s, p, d = geometry
    hint = ctx.node.name
    size, out_size = x.type.shape[2:], g.type.shape[2:]
    divisor = _avg_divisor(size, out_size, k, s, p, count_include_pad, divisor_override)
    share = _divide(ctx, g, divisor, ctx.fb.fresh(hint))
    covered = (out_size[0] * k[0], out_size[1] * k[1])
    if k == s and p == (0, 0) and covered[0] <= size[0] and covered[1] <= size[1]:
        # The windows tile the input: a broadcast, no accumulation.
        n, c = x.type.shape[:2]
        tiles = TensorType((n, c, out_size[0], k[0], out_size[1], k[1]), "f32")
        name = ctx.fb.fresh(hint)
        ctx.fb.generic(name, [(share.name, share.type, affine_map(6, ["d0", "d1", "d2", "d4"]))],
                       tiles, ["parallel"] * 6, lambda b: b.inputs[0])
        tiled = reshape(ctx, Tensor(name, tiles), (n, c) + covered, result=ctx.fb.fresh(hint))
        rest = (size[0] - covered[0], size[1] - covered[1])  # rows/cols no window reads
        return pad(ctx, tiled, (0, 0), rest, 0.0, hint)
    high = _high_padding(size, out_size, k, s, p, d)
    full = TensorType(x.type.shape[:2] + (size[0] + p[0] + high[0], size[1] + p[1] + high[1]),
                      "f32")
    acc = zeros(ctx, full, hint)
    for a in range(k[0]):
        for b in range(k[1]):
            acc = add_into(ctx, acc, share, (a, b), s, hint)
    return extract(ctx, acc, p, size, (1, 1), hint)


@lowers(aten.avg_pool2d.default)
def avg_pool2d(ctx, x, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_pool(ctx, x, _geometry(kernel_size, stride, padding), count_include_pad,
                     divisor_override, ctx.out_type(), ctx.name)


@lowers(aten.avg_pool2d_backward.default)
def avg_pool2d_backward(ctx, g, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    return _avg_pool_backward(ctx, g, x, _geometry(kernel_size, stride, padding),
                              count_include_pad, divisor_override)


def _divides(x: Tensor, out_hw) -> bool:
    size = x.type.shape[2:]
    return not any(size[i] % out_hw[i] for i in (0, 1))


def _adaptive_geometry(x, out_hw):
    size = x.type.shape[2:]
    k = (size[0] // out_hw[0], size[1] // out_hw[1])
    return k, k, (0, 0), (1, 1)


# ------------------------------------------------------------------ adaptive, uneven bins


def _bins(size: int, count: int):
    """PyTorch's adaptive bins: [floor(i * size / count), ceil((i + 1) * size / count))."""
    return [(i * size // count, -(-(i + 1) * size // count)) for i in range(count)]


def _membership(ctx, size: int, count: int, hint: str) -> Tensor:
    """A (count, size) constant: 1 where input position h lies in bin i, else 0."""
    table = np.zeros((count, size), dtype=np.float32)
    for i, (start, end) in enumerate(_bins(size, count)):
        table[i, start:end] = 1.0
    value = Tensor(ctx.fb.fresh(hint), TensorType(table.shape, "f32"))
    ctx.fb.emit(f"{value.name} = arith.constant {dense_literal(table)} : {value.type}")
    return value


def _per_bin_mean(ctx, sums: Tensor, size, result: str) -> Tensor:
    """``sums[.., i, j] / len_h(i) / len_w(j)``: the divisions of PyTorch's CPU kernel."""
    out_hw = sums.type.shape[2:]
    lengths = [np.array([end - start for start, end in _bins(size[d], out_hw[d])],
                        dtype=np.float32) for d in (0, 1)]
    tables = []
    for d, shape in ((0, (out_hw[0], 1)), (1, (out_hw[1],))):
        table = Tensor(ctx.fb.fresh("bin_size"), TensorType(shape, "f32"))
        ctx.fb.emit(f"{table.name} = arith.constant {dense_literal(lengths[d].reshape(shape))} "
                    f": {table.type}")
        tables.append(table)
    return ctx.elementwise([sums] + tables, ["f32"] * 3, lambda b, v: b.arith(
        "divf", b.arith("divf", v[0], v[1], "f32"), v[2], "f32"), out_type=sums.type,
        result=result)


def _bin_contraction(ctx, x: Tensor, out: TensorType, spread: bool, hint: str) -> Tensor:
    """``out[n, c, i, j] = sum_{h, w} x[n, c, h, w] * Mh[i, h] * Mw[j, w]`` (pooling) or, with
    ``spread``, ``out[n, c, h, w] = sum_{i, j} x[n, c, i, j] * Mh[i, h] * Mw[j, w]`` (its
    backward), Mh / Mw the bin memberships: one generic, loops (n, c, out.., x..)."""
    bins = out.shape[2:] if not spread else x.type.shape[2:]
    size = x.type.shape[2:] if not spread else out.shape[2:]
    rows, cols = (_membership(ctx, size[d], bins[d], hint) for d in (0, 1))
    # Loops d2, d3 run over out's positions, d4, d5 over x's.
    bin_dims, pos_dims = (("d4", "d5"), ("d2", "d3")) if spread else (("d2", "d3"),
                                                                        ("d4", "d5"))
    init = ctx.fb.filled(0.0, out, hint)
    name = ctx.fb.fresh(hint)

    def body(b):
        weighted = b.arith("mulf", b.arith("mulf", b.inputs[0], b.inputs[1], "f32"),
                           b.inputs[2], "f32")
        return b.arith("addf", b.out, weighted, "f32")

    ctx.fb.generic(name, [(x.name, x.type, affine_map(6, ["d0", "d1", "d4", "d5"])),
                          (rows.name, rows.type, affine_map(6, [bin_dims[0], pos_dims[0]])),
                          (cols.name, cols.type, affine_map(6, [bin_dims[1], pos_dims[1]]))],
                   out, ["parallel"] * 4 + ["reduction"] * 2, body, init=init,
                   out_map=affine_map(6, ["d0", "d1", "d2", "d3"]))
    return Tensor(name, out)


@lowers(aten._adaptive_avg_pool2d.default)
def adaptive_avg_pool2d(ctx, x, output_size):
    x = ctx.tensor(x)
    check_nchw(x, "adaptive average pooling")
    out = ctx.out_type()
    if _divides(x, out.shape[2:]):
        return _avg_pool(ctx, x, _adaptive_geometry(x, out.shape[2:]), True, None, out, ctx.name)
    sums = _bin_contraction(ctx, x, out, False, ctx.node.name)
    return _per_bin_mean(ctx, sums, x.type.shape[2:], ctx.name)


@lowers(aten._adaptive_avg_pool2d_backward.default)
def adaptive_avg_pool2d_backward(ctx, g, x):
    g, x = ctx.tensor(g), ctx.tensor(x)
    check_nchw(x, "adaptive average pooling")
    if _divides(x, g.type.shape[2:]):
        return _avg_pool_backward(ctx, g, x, _adaptive_geometry(x, g.type.shape[2:]), True,
                                  None)
    share = _per_bin_mean(ctx, g, x.type.shape[2:], ctx.fb.fresh(ctx.node.name))
    return _bin_contraction(ctx, share, x.type, True, ctx.node.name)
