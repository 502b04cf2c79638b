"""The three linalg formulations every 2-D convolution lowers to.

``correlate`` (the forward), ``input_grad`` and ``weight_grad`` take NCHW
tensors and a geometry (stride, padding, dilation pairs and a group count);
convolution.py maps nn.Conv1d/Conv2d/ConvTranspose2d and their backwards
onto them (a transposed convolution's forward is an input gradient, and so
on).

groups=1, dilation=1 keeps ``linalg.conv_2d_nchw_fchw``. Everything else is
one ``linalg.generic`` whose loops include a group loop ``g`` (dropped when
there is one group) and whose maps carry stride and dilation, e.g. the
forward reads the input at ``(n, g, c, oh * s + kh * d, ow * s + kw * d)``.
The channel dims are split into ``(G, C/G)`` with ``tensor.expand_shape`` so
that every loop is a plain dim of some operand (linalg infers the loop
ranges from the shapes).
"""

from typing import NamedTuple, Sequence, Tuple

from ..emitter import Tensor, TensorType, affine_map
from .nchw import extract, insert, pad, zeros
from .shapes import reshape

Pair = Tuple[int, int]


class Geometry(NamedTuple):
    stride: Pair
    padding: Pair
    dilation: Pair
    groups: int

    @property
    def plain(self) -> bool:
        """What ``linalg.conv_2d_nchw_fchw`` computes (after padding)."""
        return self.groups == 1 and self.dilation == (1, 1)


def _term(d: str, scale: int) -> str:
    return d if scale == 1 else f"{d} * {scale}"


class _Loops:
    """Loop names -> ``dK``; the group loop ``g`` vanishes with one group."""

    def __init__(self, names: Sequence[str], groups: int):
        self.grouped = groups != 1
        self.names = [n for n in names if n != "g" or self.grouped]

    def iterators(self, reductions: Sequence[str]):
        return ["reduction" if n in reductions else "parallel" for n in self.names]

    def map(self, results) -> str:
        """``results``: loop names, or ((name, scale), ..) sums for windows."""
        out = []
        for r in results:
            if isinstance(r, str):
                if r != "g" or self.grouped:
                    out.append(f"d{self.names.index(r)}")
            else:
                out.append(" + ".join(_term(f"d{self.names.index(n)}", s) for n, s in r))
        return affine_map(len(self.names), out)


def _split(ctx, t: Tensor, axis: int, groups: int) -> Tensor:
    """Dim ``axis`` of size C as (groups, C / groups) (no-op for one group)."""
    if groups == 1:
        return t
    shape = t.type.shape
    split = shape[:axis] + (groups, shape[axis] // groups) + shape[axis + 1:]
    return reshape(ctx, t, split, result=ctx.fb.fresh(ctx.node.name))


def _merge(ctx, t: Tensor, axis: int, groups: int, result: str = None) -> Tensor:
    """The inverse of ``_split``, named ``result`` (default: a fresh name)."""
    if groups == 1:
        return t
    shape = t.type.shape
    return reshape(ctx, t, shape[:axis] + (shape[axis] * shape[axis + 1],) + shape[axis + 2:],
                   result=result or ctx.fb.fresh(ctx.node.name))


def _multiply_add(b):
    return b.arith("addf", b.out, b.arith("mulf", b.inputs[0], b.inputs[1], "f32"), "f32")


def correlate(ctx, x: Tensor, w: Tensor, geo: Geometry, out: TensorType, result: str) -> Tensor:
    """``out[n, f, oh, ow] = sum_{c, kh, kw} x[n, c', oh*s + kh*d, ow*s + kw*d] * w[f, c, kh, kw]``
    of an already padded ``x`` (``c'`` is channel ``c`` of f's group)."""
    s, d, g = geo.stride, geo.dilation, geo.groups
    hint = result[1:].split(".")[0]
    if geo.plain:
        init = ctx.fb.filled(0.0, out, hint)
        ctx.fb.emit(f"{result} = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : "
                    f"vector<2xi64>, strides = dense<[{s[0]}, {s[1]}]> : vector<2xi64>}} "
                    f"ins({x.name}, {w.name} : {x.type}, {w.type}) outs({init} : {out}) -> {out}")
        return Tensor(result, out)
    loops = _Loops(["n", "g", "f", "oh", "ow", "c", "kh", "kw"], g)
    xs, ws = _split(ctx, x, 1, g), _split(ctx, w, 0, g)
    n, f, oh, ow = out.shape
    grouped = TensorType((n, g, f // g, oh, ow) if g != 1 else out.shape, "f32")
    init = ctx.fb.filled(0.0, grouped, hint)
    name = result if g == 1 else ctx.fb.fresh(hint)
    ctx.fb.generic(
        name, [(xs.name, xs.type, loops.map(["n", "g", "c", (("oh", s[0]), ("kh", d[0])),
                                             (("ow", s[1]), ("kw", d[1]))])),
               (ws.name, ws.type, loops.map(["g", "f", "c", "kh", "kw"]))],
        grouped, loops.iterators(["c", "kh", "kw"]), _multiply_add,
        init=init, out_map=loops.map(["n", "g", "f", "oh", "ow"]))
    return _merge(ctx, Tensor(name, grouped), 1, g, result)


def _flipped_transposed(ctx, w: Tensor, groups: int, hint: str) -> Tensor:
    """The weight of the input gradient's correlation: ``(F, C/G, KH, KW)`` ->
    ``(C, F/G, KH, KW)``, ``w'[c, f, a, b] = w[f, c, KH-1-a, KW-1-b]`` within each group."""
    ws = _split(ctx, w, 0, groups)
    kh, kw = w.type.shape[2:]
    lead = ws.type.shape[:-4] if groups != 1 else ()
    f, c = ws.type.shape[-4:-2]
    out = TensorType(lead + (c, f, kh, kw), "f32")
    rank = out.rank
    dims = [f"d{i}" for i in range(rank)]
    flip = dims[:-4] + [dims[-3], dims[-4], f"{kh - 1} - {dims[-2]}", f"{kw - 1} - {dims[-1]}"]
    name = ctx.fb.fresh(hint)
    ctx.fb.generic(name, [(ws.name, ws.type, affine_map(rank, flip))], out,
                   ["parallel"] * rank, lambda b: b.inputs[0])
    return _merge(ctx, Tensor(name, out), 0, groups)


def input_grad(ctx, g: Tensor, w: Tensor, size: Pair, geo: Geometry, hint: str) -> Tensor:
    """The gradient of ``correlate(pad(x), w)`` w.r.t. an unpadded ``x`` of spatial ``size``.

    The output gradient is spread out by the stride and padded for a full
    correlation (one strided ``insert_slice`` into zeros, or ``tensor.pad``
    at stride 1), then correlated at stride 1 and the same dilation with the
    flipped, transposed weight. Input rows no window reads get zeros.
    """
    n, f = g.type.shape[:2]
    s, p, d = geo.stride, geo.padding, geo.dilation
    kernel = w.type.shape[2:]
    offset, full, crop = [], [], []
    for i in (0, 1):
        reach = (kernel[i] - 1) * d[i]  # the window's extent minus one
        if p[i] <= reach:  # shift by the padding: the correlation yields just the interior
            offset.append(reach - p[i])
            full.append(size[i] + reach)
            crop.append(0)
        else:  # correlate over the padded input, then cut the padding off
            offset.append(reach)
            full.append(size[i] + 2 * p[i] + reach)
            crop.append(p[i])
    if s == (1, 1):
        high = [full[i] - offset[i] - g.type.shape[2 + i] for i in (0, 1)]
        spread = pad(ctx, g, offset, high, 0.0, hint)
    else:
        spread = insert(ctx, g, zeros(ctx, TensorType((n, f, full[0], full[1]), "f32"), hint),
                        offset, s, hint)
    flipped = _flipped_transposed(ctx, w, geo.groups, hint)
    channels = w.type.shape[1] * geo.groups
    out = TensorType((n, channels) + tuple(full[i] - (kernel[i] - 1) * d[i] for i in (0, 1)),
                     "f32")
    grad = correlate(ctx, spread, flipped, Geometry((1, 1), (0, 0), d, geo.groups), out,
                     ctx.fb.fresh(hint))
    return extract(ctx, grad, crop, size, (1, 1), hint)


def weight_grad(ctx, g: Tensor, x: Tensor, w_type: TensorType, geo: Geometry,
                hint: str) -> Tensor:
    """``gw[f, c, kh, kw] = sum_{n, oh, ow} g[n, f, oh, ow] * x[n, c', oh*s + kh*d, ow*s + kw*d]``
    of an already padded ``x``: one generic contraction."""
    s, d, groups = geo.stride, geo.dilation, geo.groups
    loops = _Loops(["g", "f", "c", "kh", "kw", "n", "oh", "ow"], groups)
    gs, xs = _split(ctx, g, 1, groups), _split(ctx, x, 1, groups)
    f, c, kh, kw = w_type.shape
    out = TensorType((groups, f // groups, c, kh, kw) if groups != 1 else w_type.shape, "f32")
    init = ctx.fb.filled(0.0, out, hint)
    name = ctx.fb.fresh(hint)
    ctx.fb.generic(
        name, [(gs.name, gs.type, loops.map(["n", "g", "f", "oh", "ow"])),
               (xs.name, xs.type, loops.map(["n", "g", "c", (("oh", s[0]), ("kh", d[0])),
                                             (("ow", s[1]), ("kw", d[1]))]))],
        out, loops.iterators(["n", "oh", "ow"]), _multiply_add,
        init=init, out_map=loops.map(["g", "f", "c", "kh", "kw"]))
    return _merge(ctx, Tensor(name, out), 0, groups)
