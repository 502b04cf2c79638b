"""torch.optim interop for Program (docs/Checkpoints.md, "The torch.optim mapping").

A wsc program keeps each parameter's optimizer state in MemoryX under the
parameter's name; torch.optim keys it by the parameter's index in the order
of ``optimizer.param_groups``. ``OptimizerLayout`` remembers that order and
the param groups of the optimizer the program was compiled with, and converts
between the two:

* ``to_torch(state)``: the runtime's state (``Session.optimizer_state()``) as
  exactly what ``torch.optim.<same class>.state_dict()`` returns;
* ``from_torch(state_dict)``: a torch state dict, checked against the
  compiled hyperparameters, as ``Session.load_optimizer_state()`` takes it.
"""
import copy
from typing import Dict, List

import numpy as np
import torch

# The param-group entries that decide the update: a state dict whose groups
# differ in these would train differently from the compiled program.
_NUMERIC_KEYS = {
    torch.optim.SGD: ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"),
    torch.optim.Adam: ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"),
    torch.optim.AdamW: ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"),
}


def _same(a, b) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


class OptimizerLayout:
    """Where each parameter sits in a torch optimizer's state dict."""

    def __init__(self, optimizer: torch.optim.Optimizer, model: torch.nn.Module,
                 source_key: Dict[str, str]):
        self.cls = type(optimizer)
        self.param_groups = copy.deepcopy(optimizer.state_dict()["param_groups"])
        by_id = {id(p): name for name, p in model.named_parameters()}
        # torch numbers the parameters group by group, in order.
        self.names: List[str] = []  # index -> the runtime's parameter name
        self.group_of: List[int] = []
        for g, group in enumerate(optimizer.param_groups):
            for p in group["params"]:
                self.names.append(source_key[by_id[id(p)]])
                self.group_of.append(g)

    def _is_sgd(self) -> bool:
        return self.cls is torch.optim.SGD

    def to_torch(self, state: dict) -> dict:
        """The runtime's optimizer state as torch's state_dict()."""
        out = {}
        for i, name in enumerate(self.names):
            s = state[name]
            buffers = {k: torch.from_numpy(np.array(v)) for k, v in s.items() if k != "step"}
            if s["step"] == 0 and not buffers:
                continue  # no update yet: torch has no entry either
            if self._is_sgd():
                out[i] = {"momentum_buffer": buffers.get("momentum_buffer")}
                continue
            entry = {"step": torch.tensor(float(s["step"])),
                     "exp_avg": buffers["exp_avg"], "exp_avg_sq": buffers["exp_avg_sq"]}
            if self.param_groups[self.group_of[i]]["amsgrad"]:
                entry["max_exp_avg_sq"] = buffers["max_exp_avg_sq"]
            out[i] = entry
        return {"state": out, "param_groups": copy.deepcopy(self.param_groups)}

    def from_torch(self, state_dict, shapes: Dict[str, tuple]) -> dict:
        """A torch optimizer state dict as Session.load_optimizer_state()'s
        argument; ValueError names what does not fit the compiled program."""
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise ValueError("optimizer_state must be a torch optimizer's state_dict(): a dict "
                             "with 'state' and 'param_groups'")
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"optimizer_state has {len(groups)} param groups, the program's "
                             f"{self.cls.__name__} has {len(self.param_groups)}")
        for g, (theirs, ours) in enumerate(zip(groups, self.param_groups)):
            if list(theirs.get("params", [])) != ours["params"]:
                raise ValueError(f"optimizer_state param_groups[{g}]['params'] is "
                                 f"{theirs.get('params')}, expected {ours['params']}")
            for key in _NUMERIC_KEYS[self.cls]:
                if key not in theirs:
                    raise ValueError(f"optimizer_state param_groups[{g}] has no '{key}' "
                                     f"(not a {self.cls.__name__} state dict?)")
                if not _same(theirs[key], ours[key]):
                    raise ValueError(f"optimizer_state param_groups[{g}]['{key}'] is "
                                     f"{theirs[key]!r} but the program was compiled with "
                                     f"{ours[key]!r}")
        state = state_dict["state"]
        if not state:
            return {}  # a fresh optimizer
        unknown = sorted(set(state) - set(range(len(self.names))), key=str)
        if unknown:
            raise ValueError(f"optimizer_state['state'] has entries {unknown} for no parameter "
                             f"(the program has {len(self.names)})")
        out = {}
        for i, name in enumerate(self.names):
            if i not in state:
                raise ValueError(f"optimizer_state['state'] has no entry for parameter {i} "
                                 f"('{name}'); it has {len(state)} of {len(self.names)}")
            entry, group = state[i], self.param_groups[self.group_of[i]]
            if self._is_sgd():
                required = ["momentum_buffer"] if group["momentum"] != 0 else []
            else:
                required = ["step", "exp_avg", "exp_avg_sq"] + \
                    (["max_exp_avg_sq"] if group["amsgrad"] else [])
            for key in required:
                if entry.get(key) is None:
                    raise ValueError(f"optimizer_state['state'][{i}] ('{name}') has no '{key}'")
            converted = {"step": int(float(entry["step"])) if "step" in entry else 0}
            for key, value in entry.items():
                if key == "step" or value is None:
                    continue
                t = torch.as_tensor(value)
                if tuple(t.shape) != tuple(shapes[name]):
                    raise ValueError(f"optimizer_state['state'][{i}]['{key}'] ('{name}') has "
                                     f"shape {list(t.shape)}, expected {list(shapes[name])}")
                converted[key] = t.detach().cpu().to(torch.float32).numpy()
            out[name] = converted
        return out
