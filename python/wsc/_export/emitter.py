"""A small MLIR text builder: types, literals, attributes, SSA names, linalg.generic.

Everything is appended to lists of lines and joined once at the end, so the
cost stays linear in the size of the output.
"""

import math
import re
import struct
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import torch

# torch dtype -> MLIR element type. f32 for every float tensor, i64 for labels
# and indices, i1 for masks (docs/ExportedIR.md).
ELEMENT_TYPES = {torch.float32: "f32", torch.int64: "i64", torch.bool: "i1"}
FLOAT_TYPES = ("f32",)


class TensorType(NamedTuple):
    shape: Tuple[int, ...]
    elem: str

    def __str__(self):
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.elem}>"

    @property
    def rank(self):
        return len(self.shape)


class Tensor:
    """An SSA value of tensor type in the function body."""

    __slots__ = ("name", "type", "origin")

    def __init__(self, name: str, type: TensorType, origin=None):
        self.name = name
        self.type = type
        # ("transpose", source, permutation) or ("reshape", source) when this
        # value only rearranges another: lets t(t(w)) (which autograd emits)
        # fold back to w, and chains of reshapes collapse into one.
        self.origin = origin


class Splat:
    """A tensor filled with one constant, materialised only where needed.

    Elementwise ops fold it into their body as a scalar constant instead.
    """

    __slots__ = ("value", "type")

    def __init__(self, value, type: TensorType):
        self.value = value
        self.type = type


# ----------------------------------------------------------------- literals


def _float_literal(value: float, bits: int) -> str:
    if math.isnan(value) or math.isinf(value):
        # MLIR spells non-finite floats as the hex bit pattern.
        if bits == 32:
            return "0x%08X" % struct.unpack("<I", struct.pack("<f", value))[0]
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if bits == 32:
        # Round to f32 first (as PyTorch does for scalars applied to f32
        # tensors); repr() of the result reads back to exactly that value.
        value = struct.unpack("<f", struct.pack("<f", value))[0]
    text = repr(float(value))
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"  # MLIR float literals need a decimal point
    return mantissa + e + exponent


def f32_literal(value: float) -> str:
    return _float_literal(float(value), 32)


def f64_literal(value: float) -> str:
    return _float_literal(float(value), 64)


def scalar_literal(value, elem: str) -> str:
    """The literal of an ``arith.constant`` of element type ``elem``."""
    if elem == "f32":
        return f32_literal(value)
    if elem == "i1":
        return "1" if value else "0"  # `arith.constant true` takes no type
    return str(int(value))


def string_literal(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.extend("\\%02X" % b for b in ch.encode("utf-8"))
    return '"' + "".join(out) + '"'


def attribute(value) -> str:
    """Print a Python value as an MLIR attribute (floats become f64)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        return f"{f64_literal(value)} : f64"
    if isinstance(value, str):
        return string_literal(value)
    if isinstance(value, dict):
        return dictionary(value)
    raise TypeError(f"cannot print {value!r} as an MLIR attribute")


def _key(name: str) -> str:
    bare = name and (name[0].isalpha() or name[0] == "_") and all(
        c.isalnum() or c in "_$." for c in name)
    return name if bare else string_literal(name)


def dictionary(entries: dict) -> str:
    inner = ", ".join(f"{_key(k)} = {attribute(v)}" for k, v in entries.items())
    return "{" + inner + "}"


def dense_literal(array) -> str:
    """A dense elements literal for a numpy array, exact via the hex form."""
    import numpy as np

    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.size and (flat == flat[0]).all():
        elem = {np.dtype("float32"): "f32", np.dtype("int64"): "i64",
                np.dtype("bool"): "i1"}[flat.dtype]
        return f"dense<{scalar_literal(flat[0].item(), elem)}>"
    if flat.dtype == np.bool_:
        flat = flat.astype(np.uint8)
    return 'dense<"0x' + flat.astype(flat.dtype.newbyteorder("<")).tobytes().hex().upper() + '">'


# ------------------------------------------------------------ affine maps


def affine_map(rank: int, results: Sequence) -> str:
    """``affine_map<(d0, .., dN-1) -> (results)>``; ints are constant results."""
    dims = ", ".join(f"d{i}" for i in range(rank))
    res = ", ".join(str(r) if isinstance(r, int) else r for r in results)
    return f"affine_map<({dims}) -> ({res})>"


def identity_map(rank: int) -> str:
    return affine_map(rank, [f"d{i}" for i in range(rank)])


def broadcast_map(in_shape: Sequence[int], out_shape: Sequence[int]) -> str:
    """Map from the loops of ``out_shape`` to an operand broadcast NumPy-style.

    Missing leading dims are projected away; size-1 dims that broadcast read
    index 0.
    """
    rank, offset = len(out_shape), len(out_shape) - len(in_shape)
    results = []
    for k, size in enumerate(in_shape):
        d = offset + k
        results.append(0 if size == 1 and out_shape[d] != 1 else f"d{d}")
    return affine_map(rank, results)


# ---------------------------------------------------------------- builders


def _ints(values) -> str:
    return ", ".join(str(int(v)) for v in values)

# SSA uses outside generic bodies (body values are named %b.*).
_SSA_USE = re.compile(r"%(?!b\.)[A-Za-z0-9_$.\-]+")


class Body:
    """Builds the region of one linalg.generic."""

    def __init__(self, arg_elems: Sequence[str]):
        self.args = [f"%b.in{i}" for i in range(len(arg_elems) - 1)] + ["%b.out"]
        self.arg_elems = list(arg_elems)
        self.lines: List[str] = []
        self._n = 0
        self._consts: Dict[Tuple, str] = {}

    @property
    def inputs(self) -> List[str]:
        return self.args[:-1]

    @property
    def out(self) -> str:
        return self.args[-1]

    def op(self, rhs: str) -> str:
        name = f"%b.{self._n}"
        self._n += 1
        self.lines.append(f"      {name} = {rhs}")
        return name

    def const(self, value, elem: str) -> str:
        key = (scalar_literal(value, elem), elem)
        if key not in self._consts:
            self._consts[key] = self.op(f"arith.constant {key[0]} : {elem}")
        return self._consts[key]

    # arith / math helpers; `elem` is the operand type.
    def arith(self, opname: str, a: str, b: str, elem: str) -> str:
        return self.op(f"arith.{opname} {a}, {b} : {elem}")

    def math(self, fn: str, a: str, elem: str = "f32") -> str:
        return self.op(f"math.{fn} {a} : {elem}")

    def negf(self, a: str) -> str:
        return self.op(f"arith.negf {a} : f32")

    def cmp(self, pred: str, a: str, b: str, elem: str) -> str:
        """Compare: ``pred`` is a float predicate (oeq, ugt, ..); integer
        operands use the matching signed integer predicate."""
        if elem in FLOAT_TYPES:
            return self.op(f"arith.cmpf {pred}, {a}, {b} : {elem}")
        ipred = {"oeq": "eq", "une": "ne", "olt": "slt", "ole": "sle",
                 "ogt": "sgt", "oge": "sge"}[pred]
        if elem == "i1":
            ipred = ipred.replace("s", "u") if ipred[0] == "s" else ipred
        return self.op(f"arith.cmpi {ipred}, {a}, {b} : {elem}")

    def select(self, cond: str, a: str, b: str, elem: str) -> str:
        return self.op(f"arith.select {cond}, {a}, {b} : {elem}")

    def index(self, dim: int) -> str:
        return self.op(f"linalg.index {dim} : index")

    def cast(self, value: str, src: str, dst: str) -> str:
        """Convert a scalar between f32 / i64 / i1 with PyTorch's semantics."""
        if src == dst:
            return value
        if dst == "i1":  # x != 0
            return self.cmp("une", value, self.const(0, src), src)
        if src == "i1":
            return self.op(f"arith.uitofp {value} : i1 to {dst}" if dst in FLOAT_TYPES
                           else f"arith.extui {value} : i1 to {dst}")
        if src in FLOAT_TYPES:  # float -> int truncates toward zero
            return self.op(f"arith.fptosi {value} : {src} to {dst}")
        return self.op(f"arith.sitofp {value} : {src} to {dst}")


class FunctionBody:
    """The ops of one func.func body plus fresh-name bookkeeping.

    Ops are kept as (result name, lines) records so that values nobody uses
    (e.g. a transpose folded into a later one) can be dropped at the end.
    """

    def __init__(self):
        self._ops: List[Tuple[str, List[str]]] = []
        self._counts: Dict[str, int] = {}
        self._consts: Dict[Tuple, str] = {}

    def fresh(self, hint: str) -> str:
        # fx node names never contain '.', so "hint.k" cannot clash with them.
        k = self._counts.get(hint, 0)
        self._counts[hint] = k + 1
        return f"%{hint}.{k}"

    def emit(self, line: str):
        """Append a one-line op ``%name = ...``."""
        self._ops.append((line.split(" ", 1)[0], ["    " + line]))

    def finish(self, live: Sequence[str]) -> List[str]:
        """The body lines, minus ops whose results are never used by ``live``."""
        needed = set(live)
        kept = []
        for result, lines in reversed(self._ops):
            if result not in needed:
                continue
            kept.append(lines)
            for line in lines:
                needed.update(_SSA_USE.findall(line))
        return [line for lines in reversed(kept) for line in lines]

    def scalar(self, value, elem: str) -> str:
        """An ``arith.constant`` scalar at function scope (deduplicated)."""
        key = (scalar_literal(value, elem), elem)
        name = self._consts.get(key)
        if name is None:
            name = self.fresh("cst")
            self.emit(f"{name} = arith.constant {key[0]} : {elem}")
            self._consts[key] = name
        return name

    def empty(self, type: TensorType, hint: str) -> str:
        name = self.fresh(hint)
        self.emit(f"{name} = tensor.empty() : {type}")
        return name

    def filled(self, value, type: TensorType, hint: str, result: Optional[str] = None) -> str:
        """``tensor.empty`` + ``linalg.fill`` with a scalar."""
        init = self.empty(type, hint)
        cst = self.scalar(value, type.elem)
        name = result or self.fresh(hint)
        self.emit(f"{name} = linalg.fill ins({cst} : {type.elem}) outs({init} : {type}) -> {type}")
        return name

    def pad(self, result: str, source: str, type: TensorType, low: Sequence[int],
            high: Sequence[int], value) -> TensorType:
        """``tensor.pad`` with a constant; returns the padded type."""
        out = TensorType(tuple(s + lo + hi for s, lo, hi in zip(type.shape, low, high)), type.elem)
        cst = self.scalar(value, type.elem)
        ivs = ", ".join(f"%b.i{k}: index" for k in range(type.rank))
        self._ops.append((result, [
            f"    {result} = tensor.pad {source} low[{_ints(low)}] high[{_ints(high)}] {{",
            f"    ^bb0({ivs}):",
            f"      tensor.yield {cst} : {type.elem}",
            f"    }} : {type} to {out}"]))
        return out

    def extract_slice(self, result: str, source: str, type: TensorType, offsets: Sequence[int],
                      sizes: Sequence[int], strides: Sequence[int]) -> TensorType:
        """A static (strided) ``tensor.extract_slice``; returns the slice type."""
        out = TensorType(tuple(sizes), type.elem)
        self.emit(f"{result} = tensor.extract_slice {source}[{_ints(offsets)}] [{_ints(sizes)}] "
                  f"[{_ints(strides)}] : {type} to {out}")
        return out

    def insert_slice(self, result: str, source: str, source_type: TensorType, dest: str,
                     dest_type: TensorType, offsets: Sequence[int],
                     strides: Sequence[int]) -> None:
        """A static (strided) ``tensor.insert_slice`` of all of ``source`` into ``dest``."""
        self.emit(f"{result} = tensor.insert_slice {source} into {dest}[{_ints(offsets)}] "
                  f"[{_ints(source_type.shape)}] [{_ints(strides)}] : {source_type} into "
                  f"{dest_type}")

    def generic(self, result: str, inputs: Sequence[Tuple[str, TensorType, str]],
                out_type: TensorType, iterators: Sequence[str],
                body: Callable[[Body], str], init: Optional[str] = None,
                out_map: Optional[str] = None) -> str:
        """Emit a linalg.generic.

        ``inputs`` are (ssa name, type, indexing map) triples; ``body`` gets a
        :class:`Body` and returns the yielded value. ``init`` is the outs
        operand (a fresh tensor.empty when omitted, i.e. a parallel op).
        """
        if init is None:
            init = self.empty(out_type, result[1:].split(".")[0])
        maps = [m for _, _, m in inputs] + [out_map or identity_map(len(iterators))]
        iters = ", ".join(f'"{it}"' for it in iterators)
        b = Body([t.elem for _, t, _ in inputs] + [out_type.elem])
        yielded = body(b)
        head = (f"{result} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
                f"iterator_types = [{iters}]}}")
        if inputs:
            head += (f" ins({', '.join(n for n, _, _ in inputs)} : "
                     f"{', '.join(str(t) for _, t, _ in inputs)})")
        head += f" outs({init} : {out_type}) {{"
        block_args = ", ".join(f"{a}: {e}" for a, e in zip(b.args, b.arg_elems))
        lines = ["    " + head, f"    ^bb0({block_args}):"]
        lines.extend(b.lines)
        lines.append(f"      linalg.yield {yielded} : {out_type.elem}")
        lines.append(f"    }} -> {out_type}")
        self._ops.append((result, lines))
        return result
