"""Unstructured weight sparsity: masks for ``wsc.compile(..., sparsity=masks)``
(masks that change during training: ``wsc.sparse_schedule``).

A mask is a bool tensor shaped like its parameter, ``True`` where the weight is
active. The emulator keeps masked weights at exactly zero: they get no
gradient, and the parameter's store (MemoryX, or the wafer in
layer-pipelined mode) re-applies the mask after every update, as the
weight-streaming white paper describes (section 7.4). In PyTorch terms this
is training the dense model with masked weights and masked gradients.
"""
from typing import Callable, Dict, Optional

import torch
from torch import nn



class Masks(dict):
    """Parameter name -> bool mask (``True`` = active), remembering where the
    masks came from (``source``: ``magnitude``, ``torch_prune``; a plain dict
    counts as ``explicit``). The compiler records the source in the IR."""

    def __init__(self, masks=(), source: str = "explicit"):
        super().__init__(masks)
        self.source = source

ParamFilter = Callable[[str, nn.Parameter, nn.Module], bool]

_NORMS = (nn.LayerNorm, nn.GroupNorm, nn.modules.batchnorm._BatchNorm)
_HEADS = ("head", "lm_head")


def default_filter(name: str, param: nn.Parameter, module: nn.Module) -> bool:
    """Whether to sparsify ``param``: not 1-D parameters (biases, gains), not
    embeddings or norms, and not an LM head (a Linear named ``head`` or
    ``lm_head``)."""
    if param.dim() < 2 or isinstance(module, (nn.Embedding, *_NORMS)):
        return False
    return name.rsplit(".", 1)[0].rsplit(".", 1)[-1] not in _HEADS


def _owned_parameters(model: nn.Module):
    """(name, parameter, owning module) once per parameter, in state_dict order;
    a parameter shared with an embedding counts as an embedding's."""
    embedded = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    seen = set()
    for module_name, module in model.named_modules():
        for pname, param in module.named_parameters(recurse=False):
            if id(param) in seen:
                continue
            seen.add(id(param))
            owner = nn.Embedding(1, 1) if id(param) in embedded else module
            yield (f"{module_name}.{pname}" if module_name else pname), param, owner


def active_count(sparsity: float, numel: int) -> int:
    """How many of ``numel`` weights stay active at ``sparsity``."""
    return numel - int(round(sparsity * numel))


def pick(score: torch.Tensor, candidates: torch.Tensor, k: int, largest: bool):
    """Flat indices of the ``k`` candidates with the smallest (``largest``:
    the largest) score. A stable ascending sort puts ties in index order and
    NaN last; negating the score for ``largest`` keeps both properties."""
    index = candidates.reshape(-1).nonzero().flatten()
    values = score.reshape(-1)[index]
    return index[torch.sort(-values if largest else values, stable=True).indices[:k]]


def magnitude_mask(param: torch.Tensor, sparsity: float) -> torch.Tensor:
    """The flat mask keeping the largest-magnitude weights of ``param``."""
    mask = torch.ones(param.numel(), dtype=torch.bool)
    pruned = param.numel() - active_count(sparsity, param.numel())
    mask[pick(param.detach().abs(), mask, pruned, largest=False)] = False
    return mask


def prune_magnitude(model: nn.Module, sparsity: float,
                    param_filter: ParamFilter = default_filter) -> Masks:
    """Masks that keep the largest-magnitude ``1 - sparsity`` of every selected
    parameter (ties: the lower index); zeroes the pruned weights of ``model``
    in place."""
    if isinstance(sparsity, bool) or not isinstance(sparsity, (int, float)) \
            or not 0 <= sparsity < 1:
        raise ValueError(f"sparsity must be a number in [0, 1), got {sparsity!r}")
    masks = Masks(source="magnitude")
    with torch.no_grad():
        for name, param, module in _owned_parameters(model):
            if not param_filter(name, param, module):
                continue
            masks[name] = magnitude_mask(param, sparsity).view_as(param)
            param.mul_(masks[name])
    return masks


def from_torch_prune(model: nn.Module) -> Masks:
    """The masks ``torch.nn.utils.prune`` attached to ``model``; makes each
    pruned weight a plain (masked) parameter again with ``prune.remove``."""
    from torch.nn.utils import prune
    masks = Masks(source="torch_prune")
    for module_name, module in model.named_modules():
        for hook in [h for h in module._forward_pre_hooks.values()
                     if isinstance(h, prune.BasePruningMethod)]:
            name = hook._tensor_name
            mask = getattr(module, name + "_mask").detach().bool().clone()
            prune.remove(module, name)
            masks[f"{module_name}.{name}" if module_name else name] = mask
    return masks


def check_masks(model: nn.Module, masks: Masks) -> None:
    """Raises if a mask names no parameter of ``model`` or is not a bool
    tensor of its parameter's shape."""
    params = {k: v for k, v in model.state_dict(keep_vars=True).items()
              if isinstance(v, nn.Parameter)}  # every name of a tied parameter
    if not isinstance(masks, dict):
        raise TypeError(f"sparsity must be a dict of parameter name -> bool mask, "
                        f"got {type(masks).__name__}")
    for name, mask in masks.items():
        if name not in params:
            raise ValueError(f"sparsity: '{name}' is not a parameter of the model")
        if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
            raise TypeError(f"sparsity: the mask of '{name}' must be a bool tensor")
        if mask.shape != params[name].shape:
            raise ValueError(f"sparsity: the mask of '{name}' has shape {list(mask.shape)}, "
                             f"expected {list(params[name].shape)}")


def describe(model: nn.Module, masks: Dict[str, torch.Tensor],
             planned_density: Optional[Callable[[str], float]] = None) -> Dict[str, dict]:
    """What the compiler needs of ``masks`` (checked by ``check_masks``): per
    2-D parameter, under the name the exported function gives it (a tied
    parameter's first ``state_dict`` key), its density (``planned_density``
    of its name when the masks will change, else the mask's) and the masks'
    source. Masks of other ranks stay a runtime matter: those parameters
    stream dense and MemoryX applies the mask."""
    first, canonical = {}, {}
    for key, value in model.state_dict(keep_vars=True).items():
        canonical[key] = first.setdefault(id(value), key)
    source = getattr(masks, "source", "explicit")
    density = planned_density or (lambda name: float(masks[name].float().mean()))
    return {canonical[name]: {"density": density(name), "source": source}
            for name, mask in masks.items() if mask.dim() == 2}
