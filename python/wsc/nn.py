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
import sys
import threading

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
# Each thread keeps a stack of the regions that turned VTS off: a disabled
# module's forward (its pre hook pushes, its post hook pops) or a
# vts_disabled() block. VTS is on when the stack is empty, so the stack's
# depth is the nesting count and re-entering a module is fine.
#
# A forward that raises never runs its post hook, and neither does one
# whose hooks are removed mid-call. So a module's entry also remembers the
# Python frame of that module call, and entries whose frame is no longer
# running are dropped: the count cannot leak past the call.


class _Region:
    __slots__ = ("owner", "frame")

    def __init__(self, owner, frame):
        self.owner = owner  # the disabled module, or None for vts_disabled()
        self.frame = frame  # the module call's frame; None: popped explicitly


class _Regions(threading.local):
    def __init__(self):
        self.stack = []


_regions = _Regions()


def _running_frames():
    frames, frame = set(), sys._getframe(1)
    while frame is not None:
        frames.add(id(frame))
        frame = frame.f_back
    return frames


def _drop_finished():
    stack = _regions.stack
    if any(r.frame is not None for r in stack):
        # Comparing ids is sound: a region keeps its frame object alive.
        running = _running_frames()
        stack[:] = [r for r in stack if r.frame is None or id(r.frame) in running]


def vts_enabled() -> bool:
    """Whether strip/restore called here would mark anything (False inside a
    disabled module or a ``vts_disabled()`` block)."""
    _drop_finished()
    return not _regions.stack


def _enter_disabled(module, inputs):
    # Called by Module.__call__; frame 1 is that call, alive until it returns.
    _drop_finished()
    _regions.stack.append(_Region(module, sys._getframe(1)))


def _leave_disabled(module, inputs, output):
    stack = _regions.stack
    for i in range(len(stack) - 1, -1, -1):  # innermost call of this module
        if stack[i].owner is module:
            del stack[i]
            break


def _is_ours(hooks, hook) -> bool:
    return any(h is hook for h in hooks.values())


def disable_vts(module: torch.nn.Module) -> torch.nn.Module:
    """Turn VTS off inside ``module`` (its forward and its children's): there
    strip/restore are plain identities that leave no op in the graph.

    Returns ``module``. Calling it again is a no-op; ``enable_vts`` undoes it.
    """
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"disable_vts expects a torch.nn.Module, got {type(module).__name__}")
    if not _is_ours(module._forward_pre_hooks, _enter_disabled):
        module.register_forward_pre_hook(_enter_disabled)
        module.register_forward_hook(_leave_disabled)
    return module


def enable_vts(module: torch.nn.Module) -> torch.nn.Module:
    """Undo ``disable_vts(module)``; returns ``module``."""
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"enable_vts expects a torch.nn.Module, got {type(module).__name__}")
    for hooks, hook in ((module._forward_pre_hooks, _enter_disabled),
                        (module._forward_hooks, _leave_disabled)):
        for key in [k for k, h in hooks.items() if h is hook]:
            del hooks[key]
    return module


@contextlib.contextmanager
def vts_disabled():
    """A block of code in which VTS is off (strip/restore are identities)."""
    region = _Region(None, None)
    _regions.stack.append(region)
    try:
        yield
    finally:
        stack = _regions.stack
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is region:
                del stack[i]
                break
