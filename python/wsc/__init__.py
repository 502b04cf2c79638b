"""wsc: compile PyTorch training steps for weight-streaming wafer-scale clusters.

    prog = wsc.compile(model, loss_fn, optimizer, inputs, targets, systems=4)
    loss = prog.step(inputs, targets)
"""
from ._tools import CompileError
from . import data, nn, sparse
from ._export.draws import replay as replay_draws
from .api import Program, ProgramIR, compile

__all__ = ["compile", "Program", "ProgramIR", "CompileError", "data", "nn", "sparse",
           "replay_draws"]
