"""aten op -> MLIR lowerings, one function per op, looked up in ``LOWERINGS``."""

from .registry import LOWERINGS, Context, lowers  # noqa: F401
from . import creation, elementwise, linalg_ops, losses, reductions, shapes  # noqa: F401  (register)
from .inplace import register_inplace_variants
from .graph import lower_graph  # noqa: F401

register_inplace_variants()
