"""torch.optim.SGD / Adam / AdamW -> the ``wsc.optimizer`` and
``wsc.param_groups`` module attributes (docs/ExportedIR.md)."""

from typing import Dict, List, Sequence, Tuple

import torch


def _sgd(group) -> dict:
    return {"name": "sgd", "lr": float(group["lr"]), "momentum": float(group["momentum"]),
            "dampening": float(group["dampening"]),
            "weight_decay": float(group["weight_decay"]), "nesterov": bool(group["nesterov"])}


def _adam(name):
    def convert(group) -> dict:
        beta1, beta2 = group["betas"]
        return {"name": name, "lr": float(group["lr"]), "beta1": float(beta1),
                "beta2": float(beta2), "eps": float(group["eps"]),
                "weight_decay": float(group["weight_decay"]), "amsgrad": bool(group["amsgrad"])}

    return convert


_CONVERTERS = {torch.optim.SGD: _sgd, torch.optim.Adam: _adam("adam"),
               torch.optim.AdamW: _adam("adamw")}


def optimizer_attributes(optimizer, named_params: Sequence[Tuple[str, torch.Tensor]]
                         ) -> Tuple[dict, Dict[str, dict]]:
    """Return (``wsc.optimizer`` dict, ``wsc.param_groups`` overrides).

    The base dictionary is the first param group's; parameters of other groups
    get an override entry with just the hyperparameters that differ from it.
    """
    # Exact type: a subclass may change what step() does.
    convert = _CONVERTERS.get(type(optimizer))
    if convert is None:
        raise TypeError(f"unsupported optimizer {type(optimizer).__name__}; wsc supports "
                        "torch.optim.SGD, torch.optim.Adam and torch.optim.AdamW")
    if len(optimizer.state):
        raise ValueError("the optimizer already has state (it has taken steps); export with a "
                         "freshly constructed optimizer")
    by_id = {id(p): name for name, p in named_params}
    group_of: Dict[str, int] = {}
    dicts: List[dict] = []
    for index, group in enumerate(optimizer.param_groups):
        if group.get("maximize", False):
            raise ValueError(f"{type(optimizer).__name__}(maximize=True) is not supported")
        dicts.append(convert(group))
        for p in group["params"]:
            name = by_id.get(id(p))
            if name is None:
                raise ValueError(f"optimizer param group {index} holds a tensor of shape "
                                 f"{list(p.shape)} that is not a parameter of the model")
            group_of[name] = index
    missing = [name for name, _ in named_params if name not in group_of]
    if missing:
        raise ValueError(f"model parameters not handled by the optimizer: {', '.join(missing)}")
    base = dicts[0]
    overrides = {}
    for name, _ in named_params:
        diff = {k: v for k, v in dicts[group_of[name]].items() if base[k] != v}
        if diff:
            overrides[name] = diff
    return base, overrides
