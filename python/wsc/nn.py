"""Variable tensor shape (VTS): tell wsc where a tensor's padding can be skipped.

A padded batch holds samples of different lengths, right-padded to one
sequence length. Between ``strip_padding`` and ``restore_padding`` the
compiled program works on each sample's valid tokens only (docs/VTS.md)::

    class Encoder(torch.nn.Module):
        def forward(self, ids, valid):
            x = wsc.nn.strip_padding(self.embed(ids), valid)
            x = self.blocks(x, valid)
            return wsc.nn.restore_padding(x, valid)

In plain PyTorch both are the identity, and so are their gradients: the
model computes exactly what it computes without them, provided it already
ignores padding (attention masks, masked losses), as padded models do.

``mask`` is ``(batch, seq)``, bool, int64 or float32; a sample's valid region
ends at the first 0 / False of its row. ``seq_dim`` is the sequence dim of
``x`` (any dim but the batch dim 0; negative counts from the end).

Parts of a model that must see the padding opt out with ``disable_vts``
(a module and its children) or ``vts_disabled()`` (a block of code): there
the markers are plain identities and leave nothing in the captured graph.
"""

import contextlib
import threading
import types

import torch

from . import _vts_ops

__all__ = ["strip_padding", "restore_padding", "disable_vts", "enable_vts", "vts_disabled",
           "vts_enabled"]


def strip_padding(x: torch.Tensor, mask: torch.Tensor, seq_dim: int = 1) -> torch.Tensor:
    """Mark ``x`` as padded along ``seq_dim`` by ``mask``: from here on only
    each sample's valid tokens are computed. The identity in PyTorch."""
    dim = _vts_ops.check_arguments(x, mask, seq_dim)
    if not vts_enabled():
        return x
    return _vts_ops.strip_padding(x, mask, dim)


def restore_padding(x: torch.Tensor, mask: torch.Tensor, seq_dim: int = 1) -> torch.Tensor:
    """Give a stripped ``x`` its padded shape back (the compiled program fills
    the padded positions with zeros). The identity in PyTorch."""
    dim = _vts_ops.check_arguments(x, mask, seq_dim)
    if not vts_enabled():
        return x
    return _vts_ops.restore_padding(x, mask, dim)


# ------------------------------------------------------------ opting out
#
# A per-thread depth counts the regions that turned VTS off. A disabled
# module's forward runs inside vts_disabled(), whose `finally` restores the
# count whatever happens in the forward. The instance's forward is a method
# bound to the module (types.MethodType), so deepcopy and pickling rebind it
# to the copy.


class _Depth(threading.local):
    def __init__(self):
        self.value = 0


_depth = _Depth()


def vts_enabled() -> bool:
    """Whether strip/restore called here would mark anything (False inside a
    disabled module or a ``vts_disabled()`` block)."""
    return _depth.value == 0


@contextlib.contextmanager
def vts_disabled():
    """A block of code in which VTS is off (strip/restore are identities)."""
    _depth.value += 1
    try:
        yield
    finally:
        _depth.value -= 1


def _forward_without_vts(self, *args, **kwargs):
    with vts_disabled():
        return type(self).forward(self, *args, **kwargs)


def _check_module(module, what):
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"{what} expects a torch.nn.Module, got {type(module).__name__}")
    own = module.__dict__.get("forward")
    if own is not None and getattr(own, "__func__", None) is not _forward_without_vts:
        raise ValueError(f"{what}: this {type(module).__name__} has its own forward attribute; "
                         "call it inside wsc.nn.vts_disabled() instead")
    return own is not None


def disable_vts(module: torch.nn.Module) -> torch.nn.Module:
    """Turn VTS off inside ``module`` (its forward and its children's): there
    strip/restore are plain identities that leave no op in the graph.

    Returns ``module``. Calling it again is a no-op; ``enable_vts`` undoes it.
    """
    if not _check_module(module, "disable_vts"):
        module.forward = types.MethodType(_forward_without_vts, module)
    return module


def enable_vts(module: torch.nn.Module) -> torch.nn.Module:
    """Undo ``disable_vts(module)``; returns ``module``."""
    if _check_module(module, "enable_vts"):
        del module.forward
    return module
