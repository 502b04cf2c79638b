"""wsc.compile: export a training step, run wsc-opt and wsc-translate on it,
and load the schedule on the emulator.

The choices of the enumerated options (mode, stream_dtype, target) and the
grid's bounds belong to wsc-opt: Python only checks what wsc-opt cannot see
(Python types, the pipeline string's syntax, sentinels), then asks wsc-opt
to accept the pipeline on a tiny probe module before the slow export.
"""
import math
import os
import shutil
import subprocess
from typing import Optional, Tuple, Union

import torch

from . import _build_tree
from ._batch_dims import BatchDim, batch_dims, batch_size, is_int as _is_int
from .program import Program, Tensors, as_tensors


class CompileError(RuntimeError):
    """wsc-opt or wsc-translate rejected the program; the message holds their diagnostics."""


def tool_path(name: str) -> str:
    """The path of a wsc tool: in a build tree's bin/ (see _build_tree), then on PATH."""
    for build in _build_tree.build_dirs():
        candidate = build / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(
        f"cannot find '{name}': build wsc with `make` or set WSC_BUILD_DIR")


def run_tool(name: str, args, stdin: str):
    """Runs a tool on `stdin`; returns (stdout, stderr) or raises CompileError."""
    proc = subprocess.run([tool_path(name), *args], input=stdin, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise CompileError(f"{name} failed:\n{proc.stderr.strip()}")
    return proc.stdout, proc.stderr


# A step with nothing to compute: every pipeline with valid options compiles
# it in milliseconds, so a failure is the options' fault. It gives each
# system one sample, so that the step contract (a batch of at least one
# sample per system) holds and no micro-batch size makes too many
# micro-batches (wsc/Support/Limits.h).
def _probe(batch: int) -> str:
    t = f"tensor<{batch}xf32>"
    return (f"module {{ func.func @options_probe(%x: {t} {{wsc.input = 0 : i64}})"
            f" -> ({t} {{wsc.output = 0 : i64}}) {{ return %x : {t} }} }}")


def check_pipeline(pipeline: str, systems=1) -> None:
    """Raises CompileError with wsc-opt's message if it rejects `pipeline`
    (compiled for `systems` systems)."""
    probe = _probe(systems if _is_int(systems) and 1 <= systems <= 2**20 else 1)
    try:
        run_tool("wsc-opt", [pipeline, "-"], probe + "\n")
    except CompileError as err:
        # Drop the echo of the probe that located diagnostics carry.
        lines = [line for line in str(err).splitlines()[1:]
                 if line.strip() not in (probe, "^")]
        raise CompileError(f"wsc-opt rejected the compile options {pipeline}\n"
                           + "\n".join(lines)) from None




def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _word(name: str, value) -> str:
    """A string option's value, checked to be one word of the pipeline string
    (wsc-opt judges whether it is a valid choice)."""
    if not isinstance(value, str) or not value or any(
            c.isspace() or c in "={}'\"" for c in value):
        raise ValueError(f"{name} must be a one-word string, got {value!r}")
    return value


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


def pipeline_option(*, mode: str = "auto", systems: int = 1, stream_dtype: str = "f16",
                    target: str = "cs2", time_limit: float = 60.0,
                    vts: Union[bool, str] = "auto", valid_fraction: Optional[float] = None,
                    grid: Optional[Tuple[int, int]] = None,
                    allow_sram_overflow: bool = False,
                    micro_batch_size: Union[None, str, int] = None,
                    offload_activations: bool = False, recompute: Optional[str] = None) -> str:
    """The ``--wsc-pipeline=...`` argument for wsc.compile's options, after the
    checks wsc-opt cannot make (Python types; -1 is wsc-opt's "unset" valid
    fraction, so Python owns that range)."""
    if not _is_int(systems) or systems < 1:
        raise ValueError(f"systems must be a positive int, got {systems!r}")
    if not _is_number(time_limit) or not 0 < time_limit < math.inf:
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if grid is not None and not (isinstance(grid, tuple) and len(grid) == 2
                                 and all(_is_int(n) for n in grid)):
        raise ValueError(f"grid must be a (width, height) tuple of two ints, got {grid!r}")
    if not isinstance(allow_sram_overflow, bool):
        raise ValueError(f"allow_sram_overflow must be a bool, got {allow_sram_overflow!r}")
    if not isinstance(offload_activations, bool):
        raise ValueError(f"offload_activations must be a bool, got {offload_activations!r}")
    if micro_batch_size is not None and not (
            isinstance(micro_batch_size, str) or (_is_int(micro_batch_size) and micro_batch_size > 0)):
        raise ValueError("micro_batch_size must be a positive int or one of 'auto', 'explore', "
                         f"'none', got {micro_batch_size!r}")
    vts_value = _vts_option(vts)
    if valid_fraction is not None and (not _is_number(valid_fraction)
                                       or not 0 < valid_fraction <= 1):
        raise ValueError(f"valid_fraction must be a number in (0, 1], got {valid_fraction!r}")
    pipeline = (f"--wsc-pipeline=mode={_word('mode', mode)} systems={systems} "
                f"target={_word('target', target)} "
                f"stream-dtype={_word('stream_dtype', stream_dtype)} "
                f"time-limit={float(time_limit)!r} vts={vts_value}")
    if valid_fraction is not None:
        pipeline += f" expected-valid-fraction={float(valid_fraction)!r}"
    if grid is not None:
        pipeline += f" grid={grid[0]}x{grid[1]}"
    if allow_sram_overflow:
        pipeline += " allow-sram-overflow=true"
    if offload_activations:
        pipeline += " offload-activations=true"
    if recompute is not None:  # wsc-opt checks the word
        pipeline += f" recompute={_word('recompute', recompute)}"
    if micro_batch_size is not None:  # wsc-opt checks the words
        value = (_word("micro_batch_size", micro_batch_size)
                 if isinstance(micro_batch_size, str) else micro_batch_size)
        pipeline += f" micro-batch={value}"
    return pipeline


def compile(model: torch.nn.Module, loss_fn, optimizer: torch.optim.Optimizer,
            example_inputs: Tensors, example_targets: Tensors, *, mode: str = "auto",
            systems: int = 1, stream_dtype: str = "f16", target: str = "cs2",
            time_limit: float = 60.0, sparsity=None, vts: Union[bool, str] = "auto",
            valid_fraction: Optional[float] = None,
            grid: Optional[Tuple[int, int]] = None, seed: int = 0,
            allow_sram_overflow: bool = False,
            micro_batch_size: Union[None, str, int] = None,
            offload_activations: bool = False, recompute: Optional[str] = None,
            batch_dim: BatchDim = None) -> Program:
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
    one the hardware could not run.

    `micro_batch_size` runs each system's share of the batch in micro-batches
    (weight streaming): an int, `"auto"` (the size with the best modeled step
    that fits), `"explore"` (auto, printing every candidate) or `"none"`;
    None leaves the compiler's default. Gradients accumulate over the
    micro-batches in MemoryX and the optimizer runs once per step
    (docs/Runtime.md, "Micro-batching"); report()["micro_batch"] says what
    the compiler chose.

    `offload_activations=True` lets a step that does not fit PE SRAM keep
    its activations for the backward pass in MemoryX (weight streaming):
    they stream out after their last forward use and back in for the
    backward pass, which the timing model charges.

    `recompute` chooses which activations kept for the backward pass are
    computed again just before the backward kernels that read them, instead
    of staying on the wafer (weight streaming, docs/MicroBatching.md,
    "Memory plan"): `"none"`, `"auto"` (the fastest plan that fits PE SRAM,
    offloading where that is faster), `"full"` (every forward
    value, from checkpoints at the step's narrowest points) or
    `"selective"` (the values cheapest to compute again per byte, as few as
    fit); None leaves the compiler's default, `"auto"`, which changes nothing
    in a step that fits. Recomputation redraws the
    same dropout masks and moves BatchNorm's running statistics once: the
    numerics are those of `"none"`, bit for bit. report()["memory_plan"]
    says what is stored, recomputed and offloaded, and what it costs.

    `batch_dim` says which dim of the example inputs and targets holds the
    batch: an int for all, or one per tensor (inputs first). None infers it:
    dim 0 when every tensor's dim 0 has the same size, else the one dim size
    of the first input that every tensor has (sequence-first tokens (seq,
    batch), RNN states (layers, batch, hidden)), else dim 0 with labels
    flattened with a sequence. Program.step takes its tensors in the same
    layout.

    Options wsc-opt rejects (an unknown mode, stream_dtype or target, a grid
    out of range) raise CompileError with its message, before the export."""
    from . import export  # imports torch's tracing machinery: only when compiling
    pipeline = pipeline_option(mode=mode, systems=systems, stream_dtype=stream_dtype,
                               target=target, time_limit=time_limit, vts=vts,
                               valid_fraction=valid_fraction, grid=grid,
                               allow_sram_overflow=allow_sram_overflow,
                               micro_batch_size=micro_batch_size,
                               offload_activations=offload_activations,
                               recompute=recompute)
    if not _is_int(seed) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an int in [0, 2**63), got {seed!r}")
    check_pipeline(pipeline, systems)
    described, masks, mask_schedule = None, sparsity, None
    if sparsity is not None:
        from .sparse import check_masks, describe
        from .sparse_schedule import DynamicSparsity
        if isinstance(sparsity, DynamicSparsity):
            mask_schedule, masks = sparsity, sparsity.start(model)
        check_masks(model, masks)
        described = describe(model, masks,
                             mask_schedule.planned_density if mask_schedule else None)
    inputs = as_tensors(example_inputs, "example_inputs")
    targets = as_tensors(example_targets, "example_targets")
    dims = batch_dims(inputs, targets, batch_dim)
    if batch_size(inputs, dims) < systems:
        raise ValueError(f"batch {batch_size(inputs, dims)} is smaller than systems={systems}")
    exported = export.export_training_step(model, loss_fn, optimizer, inputs, targets, described,
                                           batch_dims=dims)
    try:
        compiled, _ = run_tool("wsc-opt", [pipeline, "-"], exported)
    except CompileError as err:
        if batch_dim is None and "two different batch dims" in str(err):
            raise CompileError(f"{err}\nwsc inferred the batch dims {list(dims)} (one per "
                               "example input, then target); if that is wrong, as for a "
                               "sequence-first model, pass batch_dim= (e.g. batch_dim=1)") from None
        raise
    schedule, _ = run_tool("wsc-translate", ["--wsc-to-schedule", "-"], compiled)
    return Program(model, exported, compiled, schedule, masks, mask_schedule, seed,
                   optimizer=optimizer, batch_dims=dims)
