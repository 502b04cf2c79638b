"""aten op -> MLIR lowerings, one function per op, looked up in ``LOWERINGS``."""

from .registry import LOWERINGS, Context, lowers  # noqa: F401
from . import (creation, elementwise, indexing, linalg_ops, losses, rearrange, reductions,
               shapes, slicing)  # noqa: F401  (register)
from . import batchnorm, convolution, pooling  # noqa: F401  (register; CNN ops)
from . import vts  # noqa: F401  (register; wsc.nn strip/restore markers)
from .inplace import register_inplace_variants
from .graph import lower_graph  # noqa: F401

register_inplace_variants()
