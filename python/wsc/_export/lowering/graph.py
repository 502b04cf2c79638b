"""Walk a captured fx graph and lower every node into a FunctionBody."""

import operator
from typing import Callable, List, Sequence

import torch
import torch.fx

from ..emitter import FunctionBody, Splat, Tensor, dense_literal
from ..errors import Unsupported, UnsupportedOpError
from .registry import LOWERINGS, Context, tensor_type


def _op_name(target) -> str:
    return str(target) if isinstance(target, torch._ops.OpOverload) else getattr(
        target, "__name__", repr(target))


def check_supported(graph: torch.fx.Graph, describe: Callable) -> None:
    """Raise UnsupportedOpError for the first op without a lowering."""
    missing = [n for n in graph.nodes
               if n.op == "call_function" and n.target is not operator.getitem
               and n.target not in LOWERINGS]
    if not missing:
        return
    first = missing[0]
    message = f"{_op_name(first.target)} ({describe(first)}) is not supported by the wsc exporter"
    others = sorted({_op_name(n.target) for n in missing} - {_op_name(first.target)})
    if others:
        message += "; also unsupported: " + ", ".join(others)
    raise UnsupportedOpError(message)


def _constant(fb: FunctionBody, node, tensor: torch.Tensor):
    """A get_attr tensor constant: a splat when uniform, else a dense literal."""
    ttype = tensor_type(tensor)
    flat = tensor.detach().reshape(-1)
    if flat.numel() and bool((flat == flat[0]).all()):
        return Splat(flat[0].item(), ttype)
    name = "%" + node.name
    fb.emit(f"{name} = arith.constant {dense_literal(tensor.detach().numpy())} : {ttype}")
    return Tensor(name, ttype)


def lower_graph(gm: torch.fx.GraphModule, fb: FunctionBody, arg_names: Sequence[str],
                describe: Callable) -> List:
    """Lower ``gm`` into ``fb``; return the lowered values of the graph outputs.

    ``arg_names`` are the SSA names of the placeholders in order; ``describe``
    maps a node to a phrase naming the module it came from (for errors).
    """
    check_supported(gm.graph, describe)
    values = {}
    ctx = Context(fb, values)
    placeholders = iter(arg_names)

    def lowered(arg):
        if isinstance(arg, torch.fx.Node):
            return values[arg]
        if isinstance(arg, (list, tuple)):
            return type(arg)(lowered(a) for a in arg)
        return arg

    for node in gm.graph.nodes:
        if node.op == "placeholder":
            values[node] = Tensor(next(placeholders), tensor_type(node.meta["val"]))
        elif node.op == "get_attr":
            values[node] = _constant(fb, node, getattr(gm, node.target))
        elif node.op == "call_function" and node.target is operator.getitem:
            values[node] = values[node.args[0]][node.args[1]]
        elif node.op == "call_function":
            ctx.node = node
            try:
                values[node] = LOWERINGS[node.target](ctx, *lowered(node.args), **lowered(node.kwargs))
            except Unsupported as err:
                raise UnsupportedOpError(
                    f"{_op_name(node.target)} ({describe(node)}) is not supported by the wsc "
                    f"exporter: {err}") from None
            except (KeyError, IndexError, TypeError, AttributeError) as err:
                # A lowering's own bug still names the module it came from.
                raise UnsupportedOpError(
                    f"{_op_name(node.target)} ({describe(node)}): the wsc exporter failed to "
                    f"lower it ({type(err).__name__}: {err}); this is a bug in wsc") from err
        elif node.op == "output":
            return [lowered(a) for a in node.args[0]]
        else:
            raise UnsupportedOpError(f"fx node kind {node.op!r} ({node.target}) is not supported")
    raise AssertionError("graph without output")
