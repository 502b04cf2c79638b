"""The table of aten-op lowerings and the context they run in."""

from typing import Callable, Dict, List, Sequence

import torch

from ..emitter import (ELEMENT_TYPES, Body, FunctionBody, Splat, Tensor, TensorType,
                       broadcast_map)
from ..errors import Unsupported

# aten OpOverload -> fn(ctx, *args, **kwargs) returning Tensor / Splat / tuple.
LOWERINGS: Dict[object, Callable] = {}


def lowers(*ops):
    """Register the decorated function as the lowering of ``ops``."""

    def register(fn):
        for op in ops:
            LOWERINGS[op] = fn
        return fn

    return register


def tensor_type(value) -> TensorType:
    """The MLIR type of a (real or fake) torch tensor."""
    elem = ELEMENT_TYPES.get(value.dtype)
    if elem is None:
        raise Unsupported(f"dtype {value.dtype} (wsc supports float32, int64 and bool)")
    return TensorType(tuple(int(d) for d in value.shape), elem)


def scalar_elem(value) -> str:
    """The element type a Python scalar takes when nothing else decides it."""
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i64"
    return "f32"


def convert_scalar(value, elem: str):
    if elem == "i1":
        return bool(value)
    if elem == "i64":
        return int(value)
    return float(value)


class Context:
    """What a lowering sees: the function being built and the current node."""

    def __init__(self, fb: FunctionBody, values: dict):
        self.fb = fb
        self.values = values  # fx node -> lowered value (Tensor / Splat / tuple)
        self.node = None
        self.functional = None  # set while an in-place node lowers as its functional op

    # -- about the current node
    @property
    def op(self):
        """The aten op being lowered: the node's, or for an in-place node
        (``aten.sqrt_``) the functional op it lowers as (``aten.sqrt``)."""
        return self.functional or self.node.target

    @property
    def name(self) -> str:
        """The SSA name of the current node's (first) result."""
        return "%" + self.node.name

    def out_type(self, index=None) -> TensorType:
        val = self.node.meta["val"]
        if index is not None:
            val = val[index]
        return tensor_type(val)

    # -- values
    def tensor(self, value) -> Tensor:
        """Make sure ``value`` is an SSA tensor, materialising splats."""
        if isinstance(value, Tensor):
            return value
        if isinstance(value, Splat):
            name = self.fb.filled(value.value, value.type, "splat")
            return Tensor(name, value.type)
        raise Unsupported(f"expected a tensor operand, got {value!r}")

    def elementwise(self, operands: Sequence, compute: Sequence[str],
                    body: Callable[[Body, List[str]], str],
                    out_type: TensorType = None, result: str = None) -> Tensor:
        """A parallel linalg.generic over the broadcast of ``operands``.

        Tensors become generic inputs with broadcasting maps; splats and Python
        scalars are folded into the body as constants. Each operand reaches
        ``body`` converted to its entry in ``compute`` (a list of element
        types, one per operand); ``body`` returns the yielded value.
        """
        out = out_type or self.out_type()
        inputs, plan = [], []
        for v, elem in zip(operands, compute):
            if isinstance(v, Tensor):
                plan.append(("in", len(inputs), v.type.elem, elem))
                inputs.append((v.name, v.type, broadcast_map(v.type.shape, out.shape)))
            elif isinstance(v, Splat):
                plan.append(("const", convert_scalar(v.value, elem), elem, elem))
            elif isinstance(v, (bool, int, float)):
                plan.append(("const", convert_scalar(v, elem), elem, elem))
            else:
                raise Unsupported(f"unexpected operand {v!r}")

        def build(b: Body) -> str:
            args = []
            for kind, x, src, dst in plan:
                if kind == "in":
                    args.append(b.cast(b.inputs[x], src, dst))
                else:
                    args.append(b.const(x, dst))
            return body(b, args)

        name = self.fb.generic(result or self.name, inputs, out,
                               ["parallel"] * out.rank, build)
        return Tensor(name, out)


def elem_of(value) -> str:
    """Element type of a lowered operand (Python scalars are 'weak')."""
    if isinstance(value, (Tensor, Splat)):
        return value.type.elem
    return scalar_elem(value)


def promote(*operands) -> str:
    """PyTorch-style promotion among f32 / i64 / i1 operands.

    Tensors (even 0-d) outrank Python scalars only within the same category,
    which is all that matters for these three types.
    """
    elems = {elem_of(v) for v in operands}
    for elem in ("f32", "i64", "i1"):
        if elem in elems:
            return elem
    return "f32"
