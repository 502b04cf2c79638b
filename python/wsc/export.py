"""Export a PyTorch training step (or forward pass) as MLIR for wsc.

The output follows docs/ExportedIR.md: one ``func.func`` in upstream
dialects, with ``wsc.*`` attributes naming parameters, inputs, labels, the
loss, the gradients and the optimizer.

Library use::

    from wsc.export import export_training_step
    mlir_text = export_training_step(model, loss_fn, optimizer, inputs, targets)

Command line::

    python3 -m wsc.export examples/mlp.py -o mlp.mlir [--inference] [--batch N]

where the example file defines ``build()`` returning an :class:`Example`.
"""

import argparse
import dataclasses
import importlib.util
import inspect
import os
import sys
from typing import Any, Optional

from wsc._export.errors import UnsupportedOpError

__all__ = ["Example", "UnsupportedOpError", "export_inference", "export_training_step", "main"]


@dataclasses.dataclass
class Example:
    """What an example file's ``build()`` returns."""

    model: Any
    inputs: Any                  # tensor or tuple of tensors; dim 0 is the batch
    loss_fn: Any = None          # loss_fn(model_output, *targets) -> scalar tensor
    optimizer: Any = None        # torch.optim.SGD / Adam / AdamW over model.parameters()
    targets: Any = None          # tensor or tuple of tensors (labels)
    # sample(generator, batch) -> (inputs, targets): a fresh batch of the
    # example's task, used by --data for batches after the first. Without it
    # later batches are random inputs with shuffled labels, which no model can
    # learn, so an example that should visibly train supplies one.
    sample: Any = None


def export_training_step(model, loss_fn, optimizer, example_inputs, example_targets,
                         sparsity=None, batch_dims=None) -> str:
    """MLIR text of one training step: ``@train_step(params, inputs, labels) -> (loss, grads)``.

    ``sparsity`` maps parameter names (as the function names them) to
    ``{"density": float, "source": str}`` (``wsc.sparse.describe``).
    ``batch_dims`` gives the batch dim of each example input, then of each
    target, as the model sees them (0 by default); the function takes them
    batch-first and moves them back."""
    from wsc._export.capture import capture_training, named_parameters
    from wsc._export.module import training_module
    from wsc._export.optimizer import optimizer_attributes

    opt, groups = optimizer_attributes(optimizer, named_parameters(model))
    captured = capture_training(model, loss_fn, example_inputs, example_targets,
                                batch_dims=batch_dims)
    return training_module(captured, opt, groups, sparsity)


def export_inference(model, example_inputs) -> str:
    """MLIR text of the forward pass: ``@forward(params, inputs) -> outputs``."""
    from wsc._export.capture import capture_inference, named_parameters
    from wsc._export.module import inference_module

    named_parameters(model)  # checks the model before anything else touches it
    captured = capture_inference(model, example_inputs)
    return inference_module(captured)


# ------------------------------------------------------------------- CLI


class _CliError(Exception):
    pass


def _load_example(path: str, batch: Optional[int]) -> Example:
    if not os.path.isfile(path):
        raise _CliError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location("_wsc_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    build = getattr(module, "build", None)
    if not callable(build):
        raise _CliError(f"{path} does not define build()")
    params = inspect.signature(build).parameters
    if batch is not None and "batch_size" in params:
        example = build(batch_size=batch)
        batch = None
    else:
        example = build()
    if not isinstance(example, Example):
        raise _CliError(f"build() in {path} must return wsc.export.Example, "
                        f"got {type(example).__name__}")
    if batch is not None:
        example = dataclasses.replace(example, inputs=_rebatch(example.inputs, batch),
                                      targets=_rebatch(example.targets, batch))
    return example


def _rebatch(value, batch: int):
    """Resize dim 0 of a tensor (or tuple of tensors) by cycling its rows."""
    import torch

    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        index = torch.arange(batch) % value.shape[0]
        return value[index]
    return tuple(_rebatch(v, batch) for v in value)


def _save_weights(example: Example, path: str) -> None:
    """Parameters and buffers by state_dict key, then non-persistent buffers by name."""
    from . import safetensors
    from ._export.capture import named_buffers

    tensors = {k: v.detach().numpy() for k, v in example.model.state_dict().items()}
    for name, value in named_buffers(example.model):
        tensors.setdefault(name, value.detach().numpy())
    safetensors.save(tensors, path)


def _save_data(example: Example, path: str, batches: int) -> None:
    """Batch 0 is the example; later batches come from ``example.sample`` or,
    without it, are fresh random inputs with the example's labels shuffled (so
    integer labels stay valid)."""
    import torch
    from . import safetensors

    def as_tuple(value):
        return () if value is None else (value,) if isinstance(value, torch.Tensor) else tuple(value)

    generator = torch.Generator().manual_seed(1)
    roles = (("input", as_tuple(example.inputs)), ("label", as_tuple(example.targets)))
    stacks = {f"{role}{i}": [value] for role, values in roles for i, value in enumerate(values)}
    batch = next(iter(stacks.values()))[0].shape[0]
    for _ in range(1, batches):
        if example.sample is not None:
            inputs, targets = example.sample(generator, batch)
            fresh = (("input", as_tuple(inputs)), ("label", as_tuple(targets)))
            for role, values in fresh:
                for i, value in enumerate(values):
                    name = f"{role}{i}"
                    if name not in stacks or value.shape != stacks[name][0].shape:
                        raise _CliError(f"Example.sample returned {name} of shape "
                                        f"{tuple(value.shape)}, not like the example's")
                    stacks[name].append(value)
            continue
        for name, stack in stacks.items():
            value = stack[0]
            if value.is_floating_point():
                stack.append(torch.randn(value.shape, generator=generator))
            else:
                stack.append(value[torch.randperm(value.shape[0], generator=generator)])
    tensors = {name: torch.stack(stack).detach().numpy() for name, stack in stacks.items()}
    safetensors.save(tensors, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m wsc.export",
        description="Export the PyTorch example defined by FILE's build() as MLIR.")
    parser.add_argument("file", help="Python file defining build() -> wsc.export.Example")
    parser.add_argument("-o", "--output", help="output .mlir file (default: stdout)")
    parser.add_argument("--inference", action="store_true",
                        help="export the forward pass only (@forward)")
    parser.add_argument("--batch", type=int, metavar="N", help="override the example batch size")
    parser.add_argument("--weights", metavar="PATH",
                        help="also write the model's initial weights and buffers (safetensors)")
    parser.add_argument("--data", metavar="PATH",
                        help="also write synthetic batches shaped like the example (safetensors)")
    parser.add_argument("--batches", type=int, metavar="N",
                        help="number of batches --data writes (default 1)")
    parser.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.batches is not None and args.batches < 1:
        parser.error("--batches must be positive")
    if args.batches is not None and not args.data:
        parser.error("--batches says how many batches --data writes; pass --data PATH too")
    if args.batch is not None and args.batch < 1:
        parser.error("--batch must be positive")
    try:
        example = _load_example(args.file, args.batch)
        if args.inference:
            text = export_inference(example.model, example.inputs)
        else:
            missing = [f for f in ("loss_fn", "optimizer", "targets")
                       if getattr(example, f) is None]
            if missing:
                raise _CliError(f"training export needs Example.{', Example.'.join(missing)} "
                                "(or pass --inference)")
            text = export_training_step(example.model, example.loss_fn, example.optimizer,
                                        example.inputs, example.targets)
        if args.weights:
            _save_weights(example, args.weights)
        if args.data:
            _save_data(example, args.data, args.batches or 1)
        if args.output:
            with open(args.output, "w") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
    except Exception as err:  # report, don't dump a traceback on the user
        if args.debug:
            raise
        kind = "" if isinstance(err, (_CliError, UnsupportedOpError)) else type(err).__name__ + ": "
        print(f"wsc.export: error: {kind}{err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # Run the copy importable as wsc.export, whose Example class the example
    # files construct (this file also runs as __main__).
    from wsc.export import main as _main

    sys.exit(_main())
