"""Pointwise aten ops -> one parallel linalg.generic each (arith/math bodies)."""

import torch

from ..emitter import Splat, Tensor
from ..errors import Unsupported
from .registry import convert_scalar, elem_of, lowers, promote

aten = torch.ops.aten


def _is_scalar(value, number) -> bool:
    if isinstance(value, Splat):
        value = value.value
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == number


def _same(ctx, value) -> bool:
    """Does ``value`` already have the current node's type? (to drop x*1)"""
    return isinstance(value, Tensor) and value.type == ctx.out_type()


# ------------------------------------------------------------ arithmetic

_FLOAT_OPS = {"add": "addf", "sub": "subf", "mul": "mulf", "div": "divf"}
_INT_OPS = {"add": "addi", "sub": "subi", "mul": "muli"}


def _arith(ctx, kind, a, b, alpha=1):
    out = ctx.out_type()
    e = out.elem
    if e == "f32":
        opname = _FLOAT_OPS[kind]
    elif e == "i64" and kind in _INT_OPS:
        opname = _INT_OPS[kind]
    else:
        raise Unsupported(f"{kind} producing {e}")
    if kind == "mul":  # autograd's decompositions multiply by 1 a lot; x*1 == x exactly
        if _is_scalar(b, 1) and _same(ctx, a):
            return a
        if _is_scalar(a, 1) and _same(ctx, b):
            return b

    def body(b_, args):
        x, y = args
        if alpha != 1:
            y = b_.arith(_FLOAT_OPS["mul"] if e == "f32" else "muli", y, b_.const(alpha, e), e)
        return b_.arith(opname, x, y, e)

    return ctx.elementwise([a, b], [e, e], body)


@lowers(aten.add.Tensor, aten.add.Scalar)
def add(ctx, a, b, alpha=1):
    return _arith(ctx, "add", a, b, alpha)


@lowers(aten.sub.Tensor, aten.sub.Scalar)
def sub(ctx, a, b, alpha=1):
    return _arith(ctx, "sub", a, b, alpha)


@lowers(aten.rsub.Tensor, aten.rsub.Scalar)
def rsub(ctx, a, b, alpha=1):
    return _arith(ctx, "sub", b, a, alpha)  # b - alpha * a


@lowers(aten.mul.Tensor, aten.mul.Scalar)
def mul(ctx, a, b):
    return _arith(ctx, "mul", a, b)


@lowers(aten.div.Tensor, aten.div.Scalar, aten.div.Tensor_mode, aten.div.Scalar_mode)
def div(ctx, a, b, rounding_mode=None):
    if rounding_mode is not None:
        raise Unsupported(f"rounding_mode={rounding_mode!r}")
    if ctx.out_type().elem != "f32":
        raise Unsupported("integer division")
    return _arith(ctx, "div", a, b)


@lowers(aten.pow.Tensor_Scalar)
def pow_scalar(ctx, x, exponent):
    if elem_of(x) != "f32":
        raise Unsupported("pow of a non-float tensor")
    # The special cases PyTorch's CPU kernel takes, so results match bit for bit.
    if exponent == 1:
        return x if _same(ctx, x) else ctx.elementwise([x], ["f32"], lambda b, a: a[0])

    def body(b, args):
        (v,) = args
        if exponent == 2:
            return b.arith("mulf", v, v, "f32")
        if exponent == 3:
            return b.arith("mulf", b.arith("mulf", v, v, "f32"), v, "f32")
        if exponent == 0.5:
            return b.math("sqrt", v)
        if exponent == -0.5:
            return b.math("rsqrt", v)
        if exponent == -1:
            return b.arith("divf", b.const(1.0, "f32"), v, "f32")
        if exponent == -2:
            return b.arith("divf", b.const(1.0, "f32"), b.arith("mulf", v, v, "f32"), "f32")
        if exponent == 0:
            return b.const(1.0, "f32")
        return b.op(f"math.powf {v}, {b.const(exponent, 'f32')} : f32")

    return ctx.elementwise([x], ["f32"], body)


@lowers(aten.pow.Tensor_Tensor)
def pow_tensor(ctx, x, y):
    return ctx.elementwise([x, y], ["f32", "f32"],
                           lambda b, a: b.op(f"math.powf {a[0]}, {a[1]} : f32"))


@lowers(aten.maximum.default, aten.minimum.default)
def max_min(ctx, a, b):
    e = ctx.out_type().elem
    is_max = ctx.op is aten.maximum.default
    if e == "f32":  # maximumf/minimumf propagate NaN like torch.maximum
        opname = "maximumf" if is_max else "minimumf"
    elif e == "i64":
        opname = "maxsi" if is_max else "minsi"
    else:
        raise Unsupported(f"{e} operands")
    return ctx.elementwise([a, b], [e, e], lambda b_, x: b_.arith(opname, x[0], x[1], e))


@lowers(aten.clamp.default, aten.clamp.Tensor, aten.clamp_min.default, aten.clamp_min.Tensor,
        aten.clamp_max.default, aten.clamp_max.Tensor, aten.hardtanh.default)
def clamp(ctx, x, lo=None, hi=None):
    target = ctx.op
    if target in (aten.clamp_max.default, aten.clamp_max.Tensor):
        lo, hi = None, lo
    e = ctx.out_type().elem
    if e != "f32":
        raise Unsupported("clamp of a non-float tensor")
    operands = [x] + [v for v in (lo, hi) if v is not None]

    def body(b, args):
        v, rest = args[0], list(args[1:])
        if lo is not None:
            v = b.arith("maximumf", v, rest.pop(0), "f32")
        if hi is not None:
            v = b.arith("minimumf", v, rest.pop(0), "f32")
        return v

    return ctx.elementwise(operands, ["f32"] * len(operands), body)


# ------------------------------------------------------------ unary float

_UNARY_MATH = {
    aten.exp.default: "exp", aten.log.default: "log", aten.tanh.default: "tanh",
    aten.erf.default: "erf", aten.sqrt.default: "sqrt", aten.rsqrt.default: "rsqrt",
    aten.sin.default: "sin", aten.cos.default: "cos", aten.log1p.default: "log1p",
    aten.expm1.default: "expm1", aten.abs.default: "absf", aten.floor.default: "floor",
    aten.ceil.default: "ceil", aten.log2.default: "log2", aten.exp2.default: "exp2",
}


def _float_unary(ctx, x, body):
    if ctx.out_type().elem != "f32" or elem_of(x) != "f32":
        raise Unsupported("non-float operand")
    return ctx.elementwise([x], ["f32"], lambda b, a: body(b, a[0]))


@lowers(*_UNARY_MATH)
def unary_math(ctx, x):
    if ctx.op is aten.abs.default and ctx.out_type().elem == "i64":  # integer abs
        return ctx.elementwise([x], ["i64"], lambda b, a: b.select(
            b.cmp("olt", a[0], b.const(0, "i64"), "i64"),
            b.arith("subi", b.const(0, "i64"), a[0], "i64"), a[0], "i64"))
    fn = _UNARY_MATH[ctx.op]
    return _float_unary(ctx, x, lambda b, v: b.math(fn, v))


@lowers(aten.neg.default)
def neg(ctx, x):
    if ctx.out_type().elem == "i64":
        return ctx.elementwise([x], ["i64"], lambda b, a: b.arith("subi", b.const(0, "i64"), a[0], "i64"))
    return _float_unary(ctx, x, lambda b, v: b.negf(v))


@lowers(aten.reciprocal.default)
def reciprocal(ctx, x):
    return _float_unary(ctx, x, lambda b, v: b.arith("divf", b.const(1.0, "f32"), v, "f32"))


@lowers(aten.sigmoid.default)
def sigmoid(ctx, x):
    # 1 / (1 + exp(-x)), the formula of PyTorch's CPU kernel.
    def body(b, v):
        e = b.math("exp", b.negf(v))
        return b.arith("divf", b.const(1.0, "f32"), b.arith("addf", b.const(1.0, "f32"), e, "f32"), "f32")

    return _float_unary(ctx, x, body)


@lowers(aten.relu.default)
def relu(ctx, x):
    # x > 0 ? x : 0 with an unordered compare, so NaN passes through as in torch.
    def body(b, v):
        zero = b.const(0.0, "f32")
        return b.select(b.cmp("ugt", v, zero, "f32"), v, zero, "f32")

    return _float_unary(ctx, x, body)


@lowers(aten.leaky_relu.default)
def leaky_relu(ctx, x, negative_slope=0.01):
    def body(b, v):
        pos = b.cmp("ogt", v, b.const(0.0, "f32"), "f32")
        return b.select(pos, v, b.arith("mulf", v, b.const(negative_slope, "f32"), "f32"), "f32")

    return _float_unary(ctx, x, body)


@lowers(aten.elu_backward.default)
def elu_backward(ctx, g, alpha, scale, input_scale, is_result, x):
    """PyTorch's CPU kernel. Lowered rather than decomposed: torch 1.13's
    decomposition multiplies the result instead of the gradient on the
    positive side when ``is_result`` (the backward of ``nn.ELU(inplace=True)``)."""
    neg, pos, slope = float(alpha) * float(scale), float(scale), float(input_scale)

    def body(b, v):
        grad, value = v
        scaled = b.arith("mulf", grad, b.const(slope, "f32"), "f32")
        if is_result:  # value = elu(x) = neg * (exp(slope * x) - 1) where x <= 0
            inside = b.arith("mulf", scaled, b.arith("addf", value, b.const(neg, "f32"), "f32"),
                             "f32")
        else:
            growth = b.math("exp", b.arith("mulf", value, b.const(slope, "f32"), "f32"))
            inside = b.arith("mulf", b.arith("mulf", scaled, b.const(neg, "f32"), "f32"), growth,
                             "f32")
        outside = b.arith("mulf", grad, b.const(pos, "f32"), "f32")
        return b.select(b.cmp("ole", value, b.const(0.0, "f32"), "f32"), inside, outside, "f32")

    return ctx.elementwise([g, x], ["f32", "f32"], body)


# ------------------------------------------------------------ comparisons / select

_COMPARE = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}


def _compare_lowering(pred):
    def lower(ctx, a, b):
        e = promote(a, b)
        return ctx.elementwise([a, b], [e, e], lambda b_, x: b_.cmp(pred, x[0], x[1], e))

    return lower


for _name, _pred in _COMPARE.items():
    _packet = getattr(aten, _name)
    lowers(_packet.Tensor, _packet.Scalar)(_compare_lowering(_pred))


@lowers(aten.where.self)
def where(ctx, cond, a, b):
    e = ctx.out_type().elem
    return ctx.elementwise([cond, a, b], ["i1", e, e], lambda b_, x: b_.select(x[0], x[1], x[2], e))


@lowers(aten.masked_fill.Scalar, aten.masked_fill.Tensor)
def masked_fill(ctx, x, mask, value):
    e = ctx.out_type().elem
    return ctx.elementwise([mask, value, x], ["i1", e, e], lambda b_, v: b_.select(v[0], v[1], v[2], e))


@lowers(aten.logical_not.default)
def logical_not(ctx, x):
    return ctx.elementwise([x], ["i1"], lambda b, v: b.arith("xori", v[0], b.const(True, "i1"), "i1"))


@lowers(aten.bitwise_not.default)
def bitwise_not(ctx, x):
    """~mask on bools (attention masks), or two's complement NOT on integers."""
    e = ctx.out_type().elem
    if e not in ("i1", "i64"):
        raise Unsupported(f"bitwise_not on {e}")
    ones = True if e == "i1" else -1
    return ctx.elementwise([x], [e], lambda b, v: b.arith("xori", v[0], b.const(ones, e), e))


@lowers(aten.logical_and.default, aten.logical_or.default)
def logical_binary(ctx, a, b):
    opname = "andi" if ctx.op is aten.logical_and.default else "ori"
    return ctx.elementwise([a, b], ["i1", "i1"], lambda b_, v: b_.arith(opname, v[0], v[1], "i1"))


@lowers(aten.bitwise_and.Tensor, aten.bitwise_or.Tensor, aten.bitwise_and.Scalar,
        aten.bitwise_or.Scalar)
def bitwise_binary(ctx, a, b):
    e = ctx.out_type().elem
    if e not in ("i1", "i64"):
        raise Unsupported(f"bitwise ops on {e}")
    opname = "andi" if ctx.op.overloadpacket is aten.bitwise_and else "ori"
    return ctx.elementwise([a, b], [e, e], lambda b_, v: b_.arith(opname, v[0], v[1], e))


# ------------------------------------------------------------ dtype conversion

@lowers(aten._to_copy.default, torch.ops.prims.convert_element_type.default)
def to_copy(ctx, x, *args, **kwargs):
    out = ctx.out_type()
    if isinstance(x, Splat):
        return Splat(x.value, out)
    if x.type == out:
        return x
    return ctx.elementwise([x], [x.type.elem], lambda b, v: b.cast(v[0], x.type.elem, out.elem))


@lowers(aten.copy.default)
def copy(ctx, dst, src, non_blocking=False):
    """``src`` broadcast and converted to ``dst``'s type (``copy_`` is its in-place twin)."""
    out = ctx.out_type()
    if isinstance(src, (Splat, bool, int, float)):
        return Splat(convert_scalar(src.value if isinstance(src, Splat) else src, out.elem), out)
    if src.type == out:
        return src
    return ctx.elementwise([src], [src.type.elem],
                           lambda b, v: b.cast(v[0], src.type.elem, out.elem))
