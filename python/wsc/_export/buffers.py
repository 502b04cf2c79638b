"""Model buffers (non-trainable state such as BatchNorm's running statistics).

Buffers become function arguments after the parameters (``wsc.buffer``).
The training step returns the buffers it mutates (``wsc.buffer_update``):
make_fx records the mutation as in-place aten ops (``add_`` on
num_batches_tracked, native_batch_norm writing its running statistics), so a
buffer counts as updated when an op's schema writes to its placeholder.
"""

from typing import Dict, List, Sequence, Set, Tuple

import torch
import torch.fx

# Buffer dtypes the exporter can pass as arguments (f32, i64, i1 tensors).
BUFFER_DTYPES = (torch.float32, torch.int64, torch.bool)


def named_buffers(model: torch.nn.Module) -> List[Tuple[str, torch.Tensor]]:
    """Persistent buffers in state_dict order, then non-persistent ones, each once."""
    ids = {id(b) for _, b in model.named_buffers()}
    found, seen = [], set()
    persistent = [(k, v) for k, v in model.state_dict(keep_vars=True).items() if id(v) in ids]
    for name, value in persistent + list(model.named_buffers()):
        if id(value) in seen:
            continue
        seen.add(id(value))
        if value.dtype not in BUFFER_DTYPES:
            raise TypeError(f"buffer '{name}' has dtype {str(value.dtype).replace('torch.', '')}; "
                            "wsc supports float32, int64 and bool buffers")
        found.append((name, value))
    return found


def state_names(model: torch.nn.Module) -> Dict[int, List[str]]:
    """id(parameter or buffer) -> every dotted name it has in the module tree
    (tied weights and shared buffers have several; functional_call binds them all)."""
    out: Dict[int, List[str]] = {}
    for prefix, module in model.named_modules(remove_duplicate=False):
        for table in (module._parameters, module._buffers):
            for name, value in table.items():
                if value is None:
                    continue
                names = out.setdefault(id(value), [])
                key = f"{prefix}.{name}" if prefix else name
                if key not in names:
                    names.append(key)
    return out


def _batch_norm_writes(node):
    # native_batch_norm's schema does not say so (torch < 2.0), but in training
    # mode it updates running_mean and running_var (arguments 3 and 4) in place.
    args = list(node.args) + [None] * 8
    return [args[3], args[4]] if args[5] else []


_UNDECLARED_WRITES = {torch.ops.aten.native_batch_norm.default: _batch_norm_writes}


def _written(graph: torch.fx.Graph) -> Set[torch.fx.Node]:
    """Nodes some op writes to in place, by its schema (``Tensor(a!)`` arguments)."""
    written = set()
    for node in graph.nodes:
        if node.op == "call_function" and node.target in _UNDECLARED_WRITES:
            written.update(v for v in _UNDECLARED_WRITES[node.target](node)
                           if isinstance(v, torch.fx.Node))
        schema = getattr(node.target, "_schema", None)
        if node.op != "call_function" or schema is None:
            continue
        for i, arg in enumerate(schema.arguments):
            if arg.alias_info is None or not arg.alias_info.is_write:
                continue
            value = node.args[i] if i < len(node.args) else node.kwargs.get(arg.name)
            if isinstance(value, torch.fx.Node):
                written.add(value)
    return written


def mutated(gm: torch.fx.GraphModule, first: int, names: Sequence[str]) -> List[str]:
    """Names of the buffers (placeholders ``first``, ``first + 1``, ..) that the graph
    writes to in place."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"][first:first + len(names)]
    written = _written(gm.graph)
    return [name for name, node in zip(names, placeholders) if node in written]


def keep_updated(gm: torch.fx.GraphModule, first_placeholder: int, first_output: int,
                 names: Sequence[str]) -> List[str]:
    """The graph returns every buffer after ``first_output``; keep only the updated
    ones (in argument order) and return their names."""
    output = next(n for n in gm.graph.nodes if n.op == "output")
    results = list(output.args[0])
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    written = _written(gm.graph)
    kept, names_kept = [], []
    for i, name in enumerate(names):
        value, arg = results[first_output + i], placeholders[first_placeholder + i]
        if value is not arg or arg in written:  # an in-place op replaced or wrote it
            kept.append(value)
            names_kept.append(name)
    output.args = (tuple(results[:first_output] + kept),)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return names_kept
