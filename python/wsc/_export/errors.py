"""Exception types shared by the exporter (kept apart to avoid import cycles),
and the translation of a failure inside torch during tracing into one of them."""

import os
from typing import Optional


class UnsupportedOpError(NotImplementedError):
    """An aten op (or a use of it) that the wsc exporter cannot lower."""


class Unsupported(Exception):
    """Raised by a lowering when it rejects its arguments.

    The driver turns it into an :class:`UnsupportedOpError` that also names the
    op and the module it came from, so lowerings only state the reason.
    """


# A torch message is cut at its first line, at the first tensor repr (so no
# values are ever printed), and at this many characters.
_REASON_CHARS = 200
_REPRS = ("tensor(", "Parameter containing", "FakeTensor(")


def trace_failure(err: BaseException, where: str) -> Optional[UnsupportedOpError]:
    """A short error for ``err``, raised while make_fx traced, or None to let it through.

    ``where`` names the module on the provenance stack ("from module 'fc',
    Linear"). Errors raised inside torch (an aten op being dispatched, or a
    torch Python function) are translated: fake tensors cannot run the op, or
    the op rejects the example inputs' shapes. Errors the model's or the
    exporter's own code raised pass through unchanged.
    """
    import torch
    from torch._subclasses import fake_tensor

    op, torch_function = _failing_call(err.__traceback__, torch)
    message = str(err.args[0]) if err.args else str(err)
    data_dependent = tuple(getattr(fake_tensor, name) for name in (
        "DynamicOutputShapeException", "DataDependentOutputException")
        if hasattr(fake_tensor, name))
    if isinstance(err, data_dependent):
        return UnsupportedOpError(f"{message} ({where}) is not supported by the wsc exporter: "
                                  "its result depends on tensor values")
    if "value out of a tracing tensor" in message:
        return UnsupportedOpError(
            f"reading a tensor value in Python, e.g. .item() or data-dependent control flow "
            f"({where}), is not supported by the wsc exporter")
    what = op or torch_function
    if what is None:
        return None
    if "non-Fake Tensor inputs" in message:
        return UnsupportedOpError(
            f"{what} ({where}) reads a tensor that is neither a parameter, a buffer nor an "
            "input of the model (e.g. a plain tensor attribute); register it with "
            "register_buffer so that the wsc exporter can pass it in")
    return UnsupportedOpError(f"{what} ({where}) failed while tracing with fake tensors "
                              f"shaped like the example inputs: {_short(message)}")


def refused_while_tracing(err: "Unsupported", where: str) -> UnsupportedOpError:
    """The error for a rewrite of capture's DECOMPOSITIONS (composites.py)
    that refuses its arguments: it names the aten op and the module."""
    import torch
    op, _ = _failing_call(err.__traceback__, torch)
    return UnsupportedOpError(f"{op or 'an op'} ({where}) is not supported by the wsc "
                              f"exporter: {err}")


def _failing_call(tb, torch):
    """(the outermost aten op being dispatched, the innermost torch function) in ``tb``.

    The op is the one the model called (e.g. aten.index.Tensor), not the ones
    its fake or decomposed implementation called in turn. The torch function
    is named only when the innermost frame is torch's own Python code.
    """
    torch_dir = os.path.dirname(torch.__file__) + os.sep
    op, innermost = None, None
    while tb is not None:
        frame = tb.tb_frame
        func = frame.f_locals.get("func")
        if op is None and isinstance(func, torch._ops.OpOverload):
            op = str(func)
        innermost = frame
        tb = tb.tb_next
    torch_function = None
    if innermost is not None and innermost.f_code.co_filename.startswith(torch_dir):
        torch_function = f"{innermost.f_globals.get('__name__', 'torch')}." \
                         f"{innermost.f_code.co_name}"
    return op, torch_function


def _short(message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    for marker in _REPRS:
        if marker in first:
            first = first[:first.index(marker)].rstrip() + " ..."
    return first if len(first) <= _REASON_CHARS else first[:_REASON_CHARS - 4] + " ..."
