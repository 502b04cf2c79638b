"""Variable tensor shape markers: ``wsc.strip_padding`` / ``wsc.restore_padding``.

The torch ops of ``wsc.nn`` (see wsc/_vts_ops.py) become the wsc dialect ops
of the same name, which the compiler's VTS pass consumes::

    %r = wsc.strip_padding %x, %mask {seq_dim = 1 : i64} : tensor<4x16x32xf32>, tensor<4x16xi1>

The result has ``x``'s type (the logical shape does not change), so only the
operand types are printed. ``x`` may be any element type (token ids too).
"""

from ... import _vts_ops
from ..emitter import Tensor, dictionary
from ..errors import Unsupported
from .registry import lowers


def _marker(ctx, mnemonic: str, x, mask, seq_dim: int) -> Tensor:
    x, mask = ctx.tensor(x), ctx.tensor(mask)
    if mask.type.rank != 2 or x.type.rank < 2:
        raise Unsupported(f"mask {mask.type} for {x.type}: expected a (batch, seq) mask")
    seq_dim = int(seq_dim) % x.type.rank
    attrs = dictionary({"seq_dim": seq_dim})
    ctx.fb.emit(f"{ctx.name} = wsc.{mnemonic} {x.name}, {mask.name} {attrs} : "
                f"{x.type}, {mask.type}")
    return Tensor(ctx.name, x.type)


@lowers(_vts_ops.strip_padding)
def strip_padding(ctx, x, mask, seq_dim=1):
    return _marker(ctx, "strip_padding", x, mask, seq_dim)


@lowers(_vts_ops.restore_padding)
def restore_padding(ctx, x, mask, seq_dim=1):
    return _marker(ctx, "restore_padding", x, mask, seq_dim)
