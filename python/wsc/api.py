"""wsc.compile: compile a PyTorch training step and run it on the emulator."""
import collections
import dataclasses
import json
import re
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from . import _tools

MODES = ("auto", "weight_streaming", "layer_pipelined")
STREAM_DTYPES = ("f16", "bf16", "f32")
TARGETS = ("cs2", "tiny")
MAX_GRID_SIDE = 1 << 16  # wsc-attach-target's bound

Tensors = Union[torch.Tensor, Sequence[torch.Tensor]]


@dataclasses.dataclass(frozen=True)
class ProgramIR:
    """The MLIR of a program: as exported, and after --wsc-pipeline."""
    exported: str
    compiled: str


def _as_tuple(tensors: Tensors, what: str):
    if isinstance(tensors, torch.Tensor):
        return (tensors,)
    if isinstance(tensors, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in tensors):
        return tuple(tensors)
    raise TypeError(f"{what} must be a tensor or a tuple of tensors, got {type(tensors).__name__}")


class Program:
    """A compiled training step bound to an emulated cluster."""

    def __init__(self, model, exported: str, compiled: str, schedule: str, diagnostics: str,
                 masks=None, mask_schedule=None, seed: int = 0):
        from . import _runtime  # the native runtime binding, built by `make`
        self.mlir = ProgramIR(exported, compiled)
        self.schedule = json.loads(schedule)
        self.diagnostics = diagnostics
        # Tied parameters live once in MemoryX, under their first key.
        first = {}
        self._source_key = {k: first.setdefault(id(v), k)
                            for k, v in model.state_dict(keep_vars=True).items()}
        self._session = _runtime.Session(schedule)
        self._session.seed = seed
        # Parameters and float buffers as f32; int64 and bool buffers as they are.
        arrays = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
        self._session.load_weights({k: a.astype(np.float32) if a.dtype.kind == "f" else a
                                    for k, a in arrays.items()})
        # Masks by the schedule's names (a mask schedule's by the model's).
        self._mask_name = {k: self._source_key[k] for k in (masks or {})}
        self._masks = {self._source_key[k]: m.clone() for k, m in (masks or {}).items()}
        self._session.load_masks({k: m.cpu().numpy() for k, m in self._masks.items()})
        self._mask_schedule = mask_schedule
        self._inputs = self.schedule["inputs"]
        self._last = None
        self._steps = 0

    def _arrays(self, inputs: Tensors, targets: Tensors):
        tensors = _as_tuple(inputs, "inputs") + _as_tuple(targets, "targets")
        if len(tensors) != len(self._inputs):
            raise ValueError(f"expected {len(self._inputs)} input and target tensors, "
                             f"got {len(tensors)}")
        arrays = []
        for tensor, spec in zip(tensors, self._inputs):
            if list(tensor.shape) != spec["shape"]:
                raise ValueError(f"{spec['name']}: expected shape {spec['shape']}, "
                                 f"got {list(tensor.shape)}")
            kind = ("i1" if tensor.dtype == torch.bool else
                    "f32" if tensor.is_floating_point() else "i64")
            if kind != spec["dtype"]:
                raise TypeError(f"{spec['name']}: expected {spec['dtype']}, got {tensor.dtype}")
            dtype = {"f32": np.float32, "i64": np.int64, "i1": np.bool_}[kind]
            arrays.append(np.ascontiguousarray(tensor.detach().cpu().numpy().astype(dtype)))
        return arrays

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

    def masks(self) -> Dict[str, torch.Tensor]:
        """The current sparsity masks, keyed like model.state_dict()."""
        return {k: self._masks[src].clone() for k, src in self._mask_name.items()}

    def state_dict(self) -> Dict[str, torch.Tensor]:
        """The MemoryX master weights and buffers, keyed like model.state_dict()."""
        weights = self._session.weights()
        return collections.OrderedDict((k, torch.from_numpy(np.array(weights[src])))
                                       for k, src in self._source_key.items())

    def report(self) -> dict:
        """Mode, layouts, memory, bandwidth and the last step's modeled time."""
        kernels = [s for s in self.schedule["steps"] if s["op"] == "kernel"]
        values = {v["id"]: v for v in self.schedule["values"]}
        layouts = {}
        for k in kernels:
            for r in k["results"]:
                v = values[r]
                if "layout" in v:
                    layouts[k["name"]] = {"layout": v["layout"],
                                          "sram_bytes_per_pe": v["sram_bytes_per_pe"]}
                    break
        mode_remark = re.search(r"remark: (mode .*)", self.diagnostics)
        placed = re.search(r"remark: (placed .*)", self.diagnostics)
        vts_remark = re.search(r"remark: (VTS.*)", self.diagnostics)
        placement = {k["layer"]: {"region": k["region"], **k["lp"]}
                     for k in kernels if "region" in k}
        return {
            "mode": self.schedule["mode"],
            "mode_reason": mode_remark.group(1) if mode_remark else "",
            # Variable tensor shape: the compiler's decision (wsc-vts's remark).
            "vts_decision": vts_remark.group(1) if vts_remark else "",
            "warnings": re.findall(r"warning: (.*)", self.diagnostics),
            "systems": self.schedule["systems"],
            "stream_dtype": self.schedule["stream_dtype"],
            "params": sum(int(np.prod(p["shape"])) for p in self.schedule["params"]
                          if not p.get("buffer")),
            "buffers": sum(int(np.prod(p["shape"])) for p in self.schedule["params"]
                           if p.get("buffer")),
            "kernels": [k["name"] for k in kernels],
            "layouts": layouts,
            # Sparsity masks: each sparse parameter's current density.
            "sparsity": {k: float(m.float().mean()) for k, m in self._masks.items()},
            # Layer-pipelined mode: each layer's region and kernel model.
            "placement": placement,
            "placement_summary": placed.group(1) if placed else "",
            "last_step": dict(self._last) if self._last else None,
        }

    def floorplan_svg(self) -> str:
        """The wafer floorplan (layer-pipelined mode) as SVG: a region per
        layer coloured by its time per sample, and the routes between them."""
        if self.schedule["mode"] != "layer_pipelined":
            raise ValueError("a floorplan exists in layer_pipelined mode only; this program "
                             f"runs in {self.schedule['mode']} mode")
        svg, _ = _tools.run_tool("wsc-translate", ["--wsc-to-svg", "-"], self.mlir.compiled)
        return svg

    def write_trace(self, path: str) -> None:
        """Writes the modeled timeline of the last step as Chrome trace JSON."""
        self._session.write_trace(path)


def _vts_option(vts) -> str:
    """The pipeline's ``vts=`` value (on / off / auto) for wsc.compile's ``vts``."""
    # `is`, not ==: 1 and 0 equal True and False but are not a choice.
    if vts is True:
        return "on"
    if vts is False:
        return "off"
    if isinstance(vts, str) and vts == "auto":
        return "auto"
    raise ValueError(f"vts must be True, False or 'auto', got {vts!r}")


def compile(model: torch.nn.Module, loss_fn, optimizer: torch.optim.Optimizer,
            example_inputs: Tensors, example_targets: Tensors, *, mode: str = "auto",
            systems: int = 1, stream_dtype: str = "f16", target: str = "cs2",
            time_limit: float = 60.0, sparsity=None, vts: Union[bool, str] = "auto",
            valid_fraction: Optional[float] = None,
            grid: Optional[Tuple[int, int]] = None, seed: int = 0,
            allow_sram_overflow: bool = False) -> Program:
    """Exports one training step of `model`, compiles it and loads it on the emulator.

    `mode="auto"` runs a model that fits on one wafer layer-pipelined, and
    streams weights otherwise. `stream_dtype` is the weight-streaming dtype;
    layer-pipelined weights stay FP32 on the wafer. `time_limit` bounds the
    layer-pipelined placement search, in seconds. `sparsity` maps parameter
    names to fixed bool masks (see wsc.sparse): masked weights stay zero and
    get no gradient. It may instead be a mask schedule (wsc.sparse_schedule:
    gradual magnitude pruning, RigL, SET), which prunes `model` in place to
    its initial masks and changes them as Program.step runs.

    `vts` controls variable tensor shape execution (docs/VTS.md), which skips
    the padding that `wsc.nn.strip_padding` marks: `True` runs the marked
    regions on valid tokens only, `False` ignores the markers (every token is
    computed, as without them), and `"auto"` (the default) leaves the choice to
    the compiler. A model without markers compiles the same either way.
    `valid_fraction` is the valid-token fraction of typical batches, in
    (0, 1]: `"auto"` strips only below the compiler's threshold, and
    layer-pipelined regions are sized for samples that valid (by default for
    padded ones).

    `grid=(width, height)` replaces the target's PE grid: a scaled-down
    wafer, on which a model small enough to emulate is as compute-bound as
    a large one on a whole CS-2.

    `seed` keys the random draws of dropout and stochastic depth: the masks
    of step t depend on (seed, t) alone, not on `systems`
    (Program.random_draws, wsc.replay_draws).

    `allow_sram_overflow=True` compiles a kernel that no data layout fits in
    PE SRAM with the smallest layout and a warning, instead of failing
    (docs/Layouts.md): the numerics are unchanged, the modeled mapping is
    one the hardware could not run."""
    from .export import export_training_step
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if not isinstance(systems, int) or isinstance(systems, bool) or systems < 1:
        raise ValueError(f"systems must be a positive int, got {systems!r}")
    if stream_dtype not in STREAM_DTYPES:
        raise ValueError(f"stream_dtype must be one of {STREAM_DTYPES}, got {stream_dtype!r}")
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    if (not isinstance(time_limit, (int, float)) or isinstance(time_limit, bool)
            or not 0 < time_limit < float("inf")):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if grid is not None and not (
            isinstance(grid, tuple) and len(grid) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_GRID_SIDE
                    for n in grid)):
        raise ValueError(f"grid must be a (width, height) tuple of ints in [1, {MAX_GRID_SIDE}], "
                         f"got {grid!r}")
    if not isinstance(allow_sram_overflow, bool):
        raise ValueError(f"allow_sram_overflow must be a bool, got {allow_sram_overflow!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an int in [0, 2**63), got {seed!r}")
    vts_option = _vts_option(vts)
    if valid_fraction is not None and (
            not isinstance(valid_fraction, (int, float)) or isinstance(valid_fraction, bool)
            or not 0 < valid_fraction <= 1):
        raise ValueError(f"valid_fraction must be a number in (0, 1], got {valid_fraction!r}")
    described, masks, mask_schedule = None, sparsity, None
    if sparsity is not None:
        from .sparse import check_masks, describe
        from .sparse_schedule import DynamicSparsity
        if isinstance(sparsity, DynamicSparsity):
            mask_schedule, masks = sparsity, sparsity.start(model)
        check_masks(model, masks)
        described = describe(model, masks,
                             mask_schedule.planned_density if mask_schedule else None)
    inputs = _as_tuple(example_inputs, "example_inputs")
    targets = _as_tuple(example_targets, "example_targets")
    if inputs[0].shape[0] < systems:
        raise ValueError(f"batch {inputs[0].shape[0]} is smaller than systems={systems}")
    exported = export_training_step(model, loss_fn, optimizer, inputs, targets, described)
    pipeline = (f"--wsc-pipeline=mode={mode} systems={systems} target={target} "
                f"stream-dtype={stream_dtype} time-limit={float(time_limit)!r} vts={vts_option}")
    if valid_fraction is not None:
        pipeline += f" expected-valid-fraction={float(valid_fraction)!r}"
    if grid is not None:
        pipeline += f" grid={grid[0]}x{grid[1]}"
    if allow_sram_overflow:
        pipeline += " allow-sram-overflow=true"
    compiled, diagnostics = _tools.run_tool("wsc-opt", [pipeline, "-"], exported)
    schedule, _ = _tools.run_tool("wsc-translate", ["--wsc-to-schedule", "-"], compiled)
    return Program(model, exported, compiled, schedule, diagnostics, masks, mask_schedule, seed)
