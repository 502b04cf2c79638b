"""Assemble the MLIR module: func signature with ``wsc.*`` attributes around
the lowered body (docs/ExportedIR.md)."""

from typing import Dict, List, Optional, Sequence, Tuple

from .capture import Captured
from .emitter import FunctionBody, Splat, dictionary, string_literal
from .errors import UnsupportedOpError
from .lowering import lower_graph
from .lowering.registry import tensor_type
from .provenance import describe


def _param_attrs(name: str, sparsity: Dict[str, dict]) -> str:
    attrs = f"wsc.param = {string_literal(name)}"
    if name in sparsity:
        attrs += f", wsc.sparsity = {dictionary(sparsity[name])}"
    return "{" + attrs + "}"


def _arguments(cap: Captured, sparsity: Dict[str, dict]) -> List[Tuple[str, str]]:
    """(type, attribute dict text) per function argument, in order."""
    args = [(tensor_type(p), _param_attrs(name, sparsity)) for name, p in cap.params]
    args += [(tensor_type(b), f"{{wsc.buffer = {string_literal(name)}}}")
             for name, b in cap.buffers]
    args += [(tensor_type(x), f"{{wsc.input = {i} : i64}}") for i, x in enumerate(cap.inputs)]
    for i, y in enumerate(cap.labels):
        attrs = f"wsc.label = {i} : i64"
        if i in cap.num_classes:
            attrs += f", wsc.num_classes = {cap.num_classes[i]} : i64"
        if i in cap.ignore_index:
            attrs += f", wsc.ignore_index = {cap.ignore_index[i]} : i64"
        args.append((tensor_type(y), "{" + attrs + "}"))
    args += [(f"tensor<{'x'.join(map(str, shape)) + 'x' if shape else ''}f32>",
              f"{{wsc.random = {k} : i64}}") for k, shape in enumerate(cap.randoms)]
    return args


def build_module(cap: Captured, func_name: str, result_attrs: Sequence[str],
                 module_attrs: Optional[Dict[str, dict]] = None,
                 sparsity: Optional[Dict[str, dict]] = None) -> str:
    fb = FunctionBody()
    args = _arguments(cap, sparsity or {})
    arg_names = [f"%arg{i}" for i in range(len(args))]
    results = lower_graph(cap.graph, fb, arg_names, describe)
    if len(results) != len(result_attrs):
        raise AssertionError("captured graph has an unexpected number of outputs")
    returned = []
    for value in results:
        if isinstance(value, Splat):  # e.g. a constant output: materialise it
            name = fb.filled(value.value, value.type, "out")
        elif hasattr(value, "name"):
            name = value.name
        else:
            raise UnsupportedOpError(f"graph output {value!r} is not a tensor")
        returned.append((name, value.type))
    signature = ", ".join(f"{n}: {t} {a}" for n, (t, a) in zip(arg_names, args))
    result_sig = ", ".join(f"{t} {a}" if a else str(t)
                           for (_, t), a in zip(returned, result_attrs))
    header = "module"
    if module_attrs:
        header += " attributes {" + ", ".join(
            f"{k} = {dictionary(v)}" for k, v in module_attrs.items()) + "}"
    lines = [header + " {", f"  func.func @{func_name}({signature}) -> ({result_sig}) {{"]
    lines.extend(fb.finish([n for n, _ in returned]))
    lines.append(f"    return {', '.join(n for n, _ in returned)} : "
                 f"{', '.join(str(t) for _, t in returned)}")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def training_module(cap: Captured, optimizer: dict, param_groups: Dict[str, dict],
                    sparsity: Optional[Dict[str, dict]] = None) -> str:
    result_attrs = ["{wsc.loss}"] + [f"{{wsc.grad = {string_literal(name)}}}"
                                     for name, _ in cap.params]
    result_attrs += [f"{{wsc.buffer_update = {string_literal(name)}}}"
                     for name in cap.buffer_updates]
    attrs = {"wsc.optimizer": optimizer}
    if param_groups:
        attrs["wsc.param_groups"] = param_groups
    return build_module(cap, "train_step", result_attrs, attrs, sparsity)


def inference_module(cap: Captured) -> str:
    output = next(n for n in reversed(cap.graph.graph.nodes) if n.op == "output")
    count = len(output.args[0])
    return build_module(cap, "forward", [f"{{wsc.output = {i} : i64}}" for i in range(count)])
