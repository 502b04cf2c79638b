"""Program: a compiled training step bound to an emulated cluster (wsc._runtime)."""
import collections
import dataclasses
import json
import warnings
from typing import Dict, List, Optional, Sequence, Union

import numpy as np
import torch

from . import _build_tree
from ._export.capture import named_buffers
from .checkpoint import OptimizerLayout
from .report import build_report

Tensors = Union[torch.Tensor, Sequence[torch.Tensor]]


@dataclasses.dataclass(frozen=True)
class ProgramIR:
    """The MLIR of a program: as exported, and after --wsc-pipeline."""
    exported: str
    compiled: str


def as_tensors(tensors: Tensors, what: str):
    """`tensors` as a tuple, or TypeError naming the argument `what`."""
    if isinstance(tensors, torch.Tensor):
        return (tensors,)
    if isinstance(tensors, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in tensors):
        return tuple(tensors)
    raise TypeError(f"{what} must be a tensor or a tuple of tensors, got {type(tensors).__name__}")


class Program:
    """A compiled training step bound to an emulated cluster."""

    def __init__(self, model, exported: str, compiled: str, schedule: str,
                 masks=None, mask_schedule=None, seed: int = 0, optimizer=None,
                 batch_dims: Sequence[int] = ()):
        _runtime = _build_tree.import_runtime()
        self.mlir = ProgramIR(exported, compiled)
        self.schedule = json.loads(schedule)
        # Tied parameters live once in MemoryX, under their first key.
        first = {}
        self._source_key = {k: first.setdefault(id(v), k)
                            for k, v in model.state_dict(keep_vars=True).items()}
        self._session = _runtime.Session(schedule)
        self._session.seed = seed
        # Parameters and float buffers as f32; int64 and bool buffers as they are.
        arrays = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
        # Non-persistent buffers (rotary tables) are the model's too, by name.
        for name, value in named_buffers(model):
            arrays.setdefault(name, value.detach().cpu().numpy())
        # Parameters only: a buffer may hold -inf on purpose (a causal mask).
        parameters = {name for name, _ in model.named_parameters()}
        for name, a in arrays.items():
            if name in parameters and not np.isfinite(a).all():
                warnings.warn(f"wsc: weight '{name}' has {int((~np.isfinite(a)).sum())} "
                              "non-finite values (NaN or Inf)", RuntimeWarning, stacklevel=3)
        self._session.load_weights({k: a.astype(np.float32) if a.dtype.kind == "f" else a
                                    for k, a in arrays.items()})
        # Masks by the schedule's names (a mask schedule's by the model's).
        self._mask_name = {k: self._source_key[k] for k in (masks or {})}
        self._masks = {self._source_key[k]: m.clone() for k, m in (masks or {}).items()}
        self._session.load_masks({k: m.cpu().numpy() for k, m in self._masks.items()})
        self._mask_schedule = mask_schedule
        self._inputs = self.schedule["inputs"]
        # The step's tensors are batch-first; the user's have the batch here.
        self._batch_dims = tuple(batch_dims) or (0,) * len(self._inputs)
        self._last = None
        self._steps = 0
        # Where torch.optim keeps each parameter's state (wsc.checkpoint).
        self._optimizer = (OptimizerLayout(optimizer, model, self._source_key)
                           if optimizer is not None else None)

    def _arrays(self, inputs: Tensors, targets: Tensors):
        tensors = as_tensors(inputs, "inputs") + as_tensors(targets, "targets")
        if len(tensors) != len(self._inputs):
            raise ValueError(f"expected {len(self._inputs)} input and target tensors, "
                             f"got {len(tensors)}")
        arrays = []
        for tensor, spec, dim in zip(tensors, self._inputs, self._batch_dims):
            expected = list(spec["shape"])
            expected.insert(dim, expected.pop(0))  # in the user's layout
            if list(tensor.shape) != expected:
                raise ValueError(f"{spec['name']}: expected shape {expected}, "
                                 f"got {list(tensor.shape)}")
            tensor = tensor.movedim(dim, 0) if dim else tensor
            kind = ("i1" if tensor.dtype == torch.bool else
                    "f32" if tensor.is_floating_point() else "i64")
            if kind != spec["dtype"]:
                raise TypeError(f"{spec['name']}: expected {spec['dtype']}, got {tensor.dtype}")
            dtype = {"f32": np.float32, "i64": np.int64, "i1": np.bool_}[kind]
            arrays.append(np.ascontiguousarray(tensor.detach().cpu().numpy().astype(dtype)))
        return arrays

    @property
    def system_threads(self) -> int:
        """How many threads the emulated systems run on, each system on one
        thread at a time (docs/Runtime.md, "Systems on threads"); 1, the
        default, runs them one after another. Any count trains bit for bit
        alike. BLAS keeps its own thread count (wsc._runtime.set_num_threads):
        with N system threads on N cores, set it to 1 so that the systems,
        not BLAS, share the cores."""
        return self._session.system_threads

    @system_threads.setter
    def system_threads(self, threads: int) -> None:
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
            raise ValueError(f"system_threads must be an int >= 1, got {threads!r}")
        self._session.system_threads = threads

    @property
    def allow_nonfinite(self) -> bool:
        """False (the default): a step whose loss or a gradient becomes NaN or
        Inf raises ValueError naming the step and the parameter, before the
        update. True: training goes on through them (wsc-run --allow-nonfinite)."""
        return self._session.allow_nonfinite

    @allow_nonfinite.setter
    def allow_nonfinite(self, allow: bool) -> None:
        if not isinstance(allow, bool):
            raise ValueError(f"allow_nonfinite must be a bool, got {allow!r}")
        self._session.allow_nonfinite = allow

    def step(self, inputs: Tensors, targets: Tensors) -> float:
        """One training step on the emulator; returns the loss. With a mask
        schedule (wsc.sparse_schedule) the masks change after the steps it
        says, MemoryX requesting dense gradients first when it needs them."""
        arrays = self._arrays(inputs, targets)
        schedule = self._mask_schedule
        updating = schedule is not None and schedule.updates_at(self._steps)
        if updating and schedule.needs_gradients:
            self._session.request_gradients({k: np.ones(m.shape, dtype=np.bool_)
                                             for k, m in self._masks.items()})
        loss = self._session.step(arrays)
        self._last = self._session.last_report()
        if updating:
            self._update_masks(schedule)
        self._steps += 1
        return float(loss)

    def random_draws(self, step: Optional[int] = None) -> List[torch.Tensor]:
        """The uniform [0, 1) draws behind the random ops (dropout,
        stochastic depth) of training step `step` (default: the last one run),
        whole-batch, in the order the model runs them. Hand them to
        ``wsc.replay_draws`` to make eager PyTorch drop the same units."""
        if step is None:
            if not self._steps:
                raise ValueError("no step has run yet; pass step=")
            step = self._steps - 1
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise ValueError(f"step must be a non-negative int, got {step!r}")
        return [torch.from_numpy(self._session.random_draw(k, step))
                for k in range(self._session.num_random_inputs)]

    def _update_masks(self, schedule) -> None:
        """Runs the mask schedule's update after this step and loads the new
        masks (MemoryX rebuilds its CSR views from them)."""
        weights = self._session.weights()
        gradients = self._session.requested_gradients() if schedule.needs_gradients else {}
        tensors = lambda arrays: {k: torch.from_numpy(np.array(arrays[src]))
                                  for k, src in self._mask_name.items() if src in arrays}
        masks = {k: self._masks[src] for k, src in self._mask_name.items()}
        new = schedule.update(self._steps, tensors(weights), masks,
                              tensors(gradients) if schedule.needs_gradients else None)
        self._masks = {self._mask_name[k]: m.clone() for k, m in new.items()}
        self._session.load_masks({k: m.numpy() for k, m in self._masks.items()})

    def save_for_run(self, directory, batches: Sequence = ()) -> Dict[str, str]:
        """Writes what ``wsc-run`` needs to train this program from its
        current state, in one process or as ``mpirun -np R wsc-run``
        (README, "Many hosts"): ``schedule.json``; ``weights.safetensors``
        (MemoryX's weights and buffers by schedule name); with ``batches``
        [(inputs, targets), ...], ``data.safetensors`` (each input stacked
        over the batches); with masks, ``masks.safetensors`` and
        ``sparsity.json`` for ``--sparsity`` (a mask schedule only before the
        first step: wsc-run counts steps from 0). Returns the paths by
        name (schedule, weights, data, sparsity)."""
        import os
        from . import safetensors
        os.makedirs(directory, exist_ok=True)
        paths = {"schedule": os.path.join(directory, "schedule.json"),
                 "weights": os.path.join(directory, "weights.safetensors")}
        with open(paths["schedule"], "w") as f:
            json.dump(self.schedule, f)
        safetensors.save({k: np.array(v) for k, v in self._session.weights().items()},
                         paths["weights"])
        if batches:
            arrays = [self._arrays(inputs, targets) for inputs, targets in batches]
            paths["data"] = os.path.join(directory, "data.safetensors")
            safetensors.save({spec["name"]: np.stack([a[i] for a in arrays])
                              for i, spec in enumerate(self._inputs)}, paths["data"])
        if self._masks:
            if self._mask_schedule is not None and self._steps:
                raise ValueError("save_for_run with a mask schedule must come before the "
                                 f"first step (this program ran {self._steps})")
            safetensors.save({k: m.numpy() for k, m in self._masks.items()},
                             os.path.join(directory, "masks.safetensors"))
            sparsity = {"masks": "masks.safetensors"}
            config = getattr(self._mask_schedule, "_config", None)
            if config is not None:
                sparsity["schedules"] = [dict(config, params=sorted(self._masks))]
            elif self._mask_schedule is not None:
                raise ValueError("wsc-run runs GMP, RigL and SET only; this mask schedule "
                                 f"is a {type(self._mask_schedule).__name__}")
            paths["sparsity"] = os.path.join(directory, "sparsity.json")
            with open(paths["sparsity"], "w") as f:
                json.dump(sparsity, f)
        return paths

    def masks(self) -> Dict[str, torch.Tensor]:
        """The current sparsity masks, keyed like model.state_dict()."""
        return {k: self._masks[src].clone() for k, src in self._mask_name.items()}

    def state_dict(self) -> Dict[str, torch.Tensor]:
        """The MemoryX master weights and buffers, keyed like model.state_dict()."""
        weights = self._session.weights()
        return collections.OrderedDict((k, torch.from_numpy(np.array(weights[src])))
                                       for k, src in self._source_key.items())

    def save(self, path: str) -> None:
        """Writes a checkpoint of the program to `path` (docs/Checkpoints.md):
        weights, buffers, optimizer state, masks and the step count, in one
        safetensors file written atomically."""
        self._session.save_checkpoint(str(path), self._steps,
                                      self._last["loss"] if self._last else None)

    def load(self, path: str) -> None:
        """Continues from a checkpoint `save` (or wsc-run) wrote for this
        program: the next steps equal the saved program's bit for bit. A
        checkpoint of another program, or a corrupt one, is a ValueError
        naming the file and what differs."""
        restored = self._session.load_checkpoint(str(path))
        self._steps = restored["step"]
        for name, mask in restored["masks"].items():
            if name in self._masks:
                self._masks[name] = torch.from_numpy(mask)
        self._last = None

    def optimizer_state_dict(self) -> dict:
        """The optimizer state in exactly the structure the torch.optim
        optimizer the program was compiled with returns from state_dict()."""
        return self._optimizer_layout().to_torch(self._session.optimizer_state())

    def load_state_dict(self, model_state: Dict[str, torch.Tensor],
                        optimizer_state: Optional[dict] = None) -> None:
        """Loads PyTorch's model.state_dict() and, optionally, its optimizer's
        state_dict(); without one the optimizer starts afresh."""
        missing = [k for k in self._source_key if k not in model_state]
        unexpected = [k for k in model_state if k not in self._source_key]
        if missing or unexpected:
            raise ValueError(f"model_state: missing keys {missing}, unexpected keys {unexpected}")
        arrays = {src: model_state[k].detach().cpu().numpy()
                  for k, src in self._source_key.items() if k == src}
        state = None
        if optimizer_state is not None:  # checked before anything changes
            shapes = {p["name"]: tuple(p["shape"]) for p in self.schedule["params"]}
            state = self._optimizer_layout().from_torch(optimizer_state, shapes)
        self._session.load_weights({k: a.astype(np.float32) if a.dtype.kind == "f" else a
                                    for k, a in arrays.items()})
        if state:
            self._session.load_optimizer_state(state)

    def _optimizer_layout(self) -> OptimizerLayout:
        if self._optimizer is None:
            raise ValueError("this Program was built without its torch optimizer")
        return self._optimizer

    def report(self) -> dict:
        """Mode and why, layouts, placement, memory, bandwidth and the last
        step's modeled time (wsc.report.build_report)."""
        return build_report(self.schedule, self._masks, self._last)

    def floorplan_svg(self) -> str:
        """The wafer floorplan (layer-pipelined mode) as SVG: a region per
        layer coloured by its time per sample, and the routes between them."""
        if self.schedule["mode"] != "layer_pipelined":
            raise ValueError("a floorplan exists in layer_pipelined mode only; this program "
                             f"runs in {self.schedule['mode']} mode")
        from .compiler import run_tool  # compiler imports this module
        svg, _ = run_tool("wsc-translate", ["--wsc-to-svg", "-"], self.mlir.compiled)
        return svg

    def write_trace(self, path: str) -> None:
        """Writes the modeled timeline of the last step as Chrome trace JSON."""
        self._session.write_trace(path)
