"""wsc: compile PyTorch training steps for weight-streaming wafer-scale clusters.

    prog = wsc.compile(model, loss_fn, optimizer, inputs, targets, systems=4)
    loss = prog.step(inputs, targets)
"""
from . import _build_tree

# The native binding wsc._runtime: beside this file when installed, else in a
# build tree (run from the source tree).
__path__ += _build_tree.binding_dirs()

from . import data, nn, sparse  # noqa: E402
from ._export.draws import replay as replay_draws  # noqa: E402
from .compiler import CompileError, compile  # noqa: E402
from .program import Program, ProgramIR  # noqa: E402

__all__ = ["compile", "Program", "ProgramIR", "CompileError", "data", "nn", "sparse",
           "replay_draws"]
