"""The torch ops behind ``wsc.nn.strip_padding`` / ``restore_padding``.

Both are registered with ``torch.library`` (torch 1.13 API) as
``torch.ops.wsc.strip_padding`` / ``torch.ops.wsc.restore_padding`` with the
schema ``(Tensor x, Tensor mask, int seq_dim=1) -> Tensor``, so that a make_fx
capture records them as ops of their own that the exporter lowers to
``wsc.strip_padding`` / ``wsc.restore_padding`` (lowering/vts.py).

Kernels, one per dispatch key:

* ``CompositeExplicitAutograd``: the eager identity (a copy of ``x``). Not
  ``CompositeImplicitAutograd``: make_fx would decompose such an op into its
  body and the marker would vanish from the graph.
* ``Meta``: the result's shape and dtype, without data. Fake tensors (make_fx
  ``tracing_mode="fake"`` and the exporter's meta-device path, which forbids
  fallback kernels) run an op's Meta kernel.
* ``Autograd``: wraps the op in an ``autograd.Function`` whose backward is the
  mirrored op on the gradient (strip <-> restore, same mask and seq_dim), so
  the captured backward pass carries the markers too. Its forward re-enters
  the op below the autograd keys, as torch 1.13's own prims do.
"""

import torch

# Each op and the op its backward applies to the gradient.
MIRRORS = {"strip_padding": "restore_padding", "restore_padding": "strip_padding"}
MASK_DTYPES = (torch.bool, torch.int64, torch.float32)

# Module-global: the registrations are undone when the Library is collected.
_LIBRARY = torch.library.Library("wsc", "DEF")
for _name in MIRRORS:
    _LIBRARY.define(f"{_name}(Tensor x, Tensor mask, int seq_dim=1) -> Tensor")


def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def check_arguments(x, mask, seq_dim) -> int:
    """Check a strip/restore call; return ``seq_dim`` made non-negative.

    Raises TypeError for a wrong kind of argument and ValueError for a wrong
    shape or dimension.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a torch.Tensor, got {type(mask).__name__}")
    if not isinstance(seq_dim, int) or isinstance(seq_dim, bool):
        raise TypeError(f"seq_dim must be an int, got {type(seq_dim).__name__}")
    if x.dim() < 2:
        raise ValueError(f"x must have a batch dim and a sequence dim (rank >= 2), got shape "
                         f"{list(x.shape)}")
    if not -x.dim() <= seq_dim < x.dim():
        raise ValueError(f"seq_dim {seq_dim} is out of range for x of rank {x.dim()}")
    dim = seq_dim % x.dim()
    if dim == 0:
        raise ValueError(f"seq_dim {seq_dim} is the batch dim (0) of x; the sequence dim must "
                         "be another one")
    if mask.dtype not in MASK_DTYPES:
        allowed = ", ".join(_dtype_name(d) for d in MASK_DTYPES)
        raise TypeError(f"mask has dtype {_dtype_name(mask.dtype)}; expected {allowed}")
    expected = [x.shape[0], x.shape[dim]]
    if list(mask.shape) != expected:
        raise ValueError(f"mask has shape {list(mask.shape)}, expected {expected} (batch, "
                         f"sequence) for x of shape {list(x.shape)} with seq_dim={dim}")
    return dim


def _identity(x, mask, seq_dim=1):
    check_arguments(x, mask, seq_dim)
    # A copy, not x itself: the schema promises a result that aliases nothing.
    return x.clone()


def _result_shape(x, mask, seq_dim=1):
    check_arguments(x, mask, seq_dim)
    return torch.empty_like(x)


def _below_autograd(op, x, mask, seq_dim):
    """Run ``op`` past the autograd kernel (the guard is RAII-only in 1.13)."""
    guard = torch._C._AutoDispatchBelowAutograd()
    try:
        return op(x, mask, seq_dim)
    finally:
        del guard


def _with_mirrored_backward(name: str, mirror_name: str):
    """The Autograd kernel of op ``name``: its backward applies op
    ``mirror_name`` to the gradient, with the same mask and seq_dim."""
    op, mirror = getattr(torch.ops.wsc, name).default, getattr(torch.ops.wsc, mirror_name).default

    def forward(ctx, x, mask, seq_dim):
        ctx.save_for_backward(mask)
        ctx.seq_dim = seq_dim
        return _below_autograd(op, x, mask, seq_dim)

    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return mirror(grad, mask, ctx.seq_dim), None, None

    # Named after the op, so grad_fn reads StripPaddingBackward.
    function = type("".join(part.title() for part in name.split("_")),
                    (torch.autograd.Function,),
                    {"forward": staticmethod(forward), "backward": staticmethod(backward)})

    def kernel(x, mask, seq_dim=1):
        if torch.is_grad_enabled() and x.requires_grad:
            return function.apply(x, mask, seq_dim)
        return _below_autograd(op, x, mask, seq_dim)

    return kernel


for _name, _mirror in MIRRORS.items():
    _LIBRARY.impl(_name, _identity, "CompositeExplicitAutograd")
    _LIBRARY.impl(_name, _result_shape, "Meta")
    _LIBRARY.impl(_name, _with_mirrored_backward(_name, _mirror), "Autograd")

strip_padding = torch.ops.wsc.strip_padding.default
restore_padding = torch.ops.wsc.restore_padding.default
