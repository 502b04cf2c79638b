"""In-place writes in a traced step: which values an op writes, dead-code
elimination that keeps them, and the writes the compiled step cannot keep.

make_fx records mutation as is (no functionalization in torch 1.13). A
write is kept by the lowering (lowering/inplace.py: the result replaces the
mutated value; lowering/view_writes.py: a write into a slice updates the
base) or refused here, so none is dropped silently.
"""

from typing import List, Set

import torch
import torch.fx

from .errors import UnsupportedOpError
from .lowering.inplace import VIEW_OPS
from .provenance import describe

aten = torch.ops.aten


def _batch_norm_writes(node):
    # native_batch_norm's schema does not say so (torch < 2.0), but in training
    # mode it updates running_mean and running_var (arguments 3 and 4) in place.
    args = list(node.args) + [None] * 8
    return [args[3], args[4]] if args[5] else []


_UNDECLARED_WRITES = {aten.native_batch_norm.default: _batch_norm_writes}


def writes(node: torch.fx.Node) -> List[torch.fx.Node]:
    """The values ``node`` writes to in place, by its schema (``Tensor(a!)`` arguments)."""
    if node.op != "call_function":
        return []
    found = []
    if node.target in _UNDECLARED_WRITES:
        found += [v for v in _UNDECLARED_WRITES[node.target](node) if isinstance(v, torch.fx.Node)]
    schema = getattr(node.target, "_schema", None)
    for i, arg in enumerate(schema.arguments if schema is not None else ()):
        if arg.alias_info is None or not arg.alias_info.is_write:
            continue
        value = node.args[i] if i < len(node.args) else node.kwargs.get(arg.name)
        if isinstance(value, torch.fx.Node):
            found.append(value)
    return found


# Views of a whole tensor: a write into one writes the tensor itself.
_ALIASES = (aten.detach.default, aten.alias.default)


def _alias_base(node: torch.fx.Node) -> torch.fx.Node:
    while node.op == "call_function" and node.target in _ALIASES:
        node = node.args[0]
    return node


def written(graph: torch.fx.Graph) -> Set[torch.fx.Node]:
    """Nodes some op writes to in place, and the tensors they alias whole
    (a write into ``detach(w)`` writes ``w``)."""
    found = {value for node in graph.nodes for value in writes(node)}
    return found | {_alias_base(value) for value in found}


def drop_dead_code(graph: torch.fx.Graph) -> bool:
    """fx's dead-code elimination, except that an in-place op stays although
    nobody reads its result: it may write through a view into a tensor that
    is read (as_strided_backward's ``storage.as_strided(..).copy_(grad)``).
    fx's own elimination drops it and leaves the reads with zeros; kept, it
    lowers or is refused (lowering/inplace.py). Returns whether it changed."""
    changed = False
    for node in reversed(graph.nodes):
        if node.op not in ("placeholder", "output") and not node.users and not writes(node):
            graph.erase_node(node)
            changed = True
    return changed


def _view_base(node: torch.fx.Node) -> torch.fx.Node:
    """The tensor whose storage ``node`` shares: through views, and through
    in-place ops, which return the tensor they wrote."""
    while node.op == "call_function":
        if node.target in VIEW_OPS:
            node = node.args[0]
        elif writes(node):
            node = writes(node)[0]
        else:
            break
    return node


def refuse_lost_writes(gm: torch.fx.GraphModule, params, buffers) -> None:
    """In-place writes the compiled step could not keep: into part of a
    parameter or buffer through a view (the step returns whole values). A
    whole parameter written in place (``nn.Embedding(max_norm=..)``
    renormalises it) is returned like an updated buffer
    (``return_written_parameters``)."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    state = {node: ("parameter", name) for node, (name, _) in zip(placeholders, params)}
    state.update({node: ("buffer", name) for node, (name, _) in
                  zip(placeholders[len(params):], buffers)})
    for node in gm.graph.nodes:
        for value in writes(node):
            base = _view_base(value)
            if base not in state:
                continue
            kind, name = state[base]
            if _alias_base(value) is not base:  # a part, or the result of another write
                raise UnsupportedOpError(
                    f"{node.target} ({describe(node)}) writes to {kind} '{name}' through a "
                    f"view of part of it or another in-place op's result, which the wsc "
                    f"exporter does not support; assign the whole {kind} instead")


def return_written_parameters(gm: torch.fx.GraphModule, params) -> List[str]:
    """Appends each parameter the step writes in place to the graph's
    outputs (its value after the writes, before the optimizer applies its
    gradient) and returns their names, in parameter order."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"][:len(params)]
    found = written(gm.graph)
    names = [name for (name, _), node in zip(params, placeholders) if node in found]
    if names:
        output = next(n for n in gm.graph.nodes if n.op == "output")
        output.args = (tuple(output.args[0]) + tuple(
            node for (name, _), node in zip(params, placeholders) if node in found),)
        gm.recompile()
    return names
