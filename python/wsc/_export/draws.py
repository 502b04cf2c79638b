"""Random draws (dropout, stochastic depth) become inputs the runtime draws.

make_fx records ``nn.Dropout`` in training as ``bernoulli_(empty_like(x), 1-p)``
(torchvision's StochasticDepth likewise; ``native_dropout``'s decomposition as
``rand_like(x) > p``). Each such draw is replaced by a uniform [0, 1) tensor
``u`` of its shape, a new graph input, and the op by arithmetic on ``u``:
``bernoulli(q) = (u < q)``, ``uniform(a, b) = a + (b - a) u``.

The input becomes a function argument ``{wsc.random = k}`` after the labels
(docs/ExportedIR.md). The runtime fills it each step from a counter-based RNG
keyed by (seed, step, k, the element's index in the whole batch), so runs are
reproducible and independent of the number of systems (docs/Runtime.md,
"Random draws"). ``replay`` gives eager PyTorch the same numbers.
"""

import contextlib
from typing import Callable, Dict, Iterator, List, Sequence, Tuple

import torch
import torch.fx
from torch.utils._python_dispatch import TorchDispatchMode

from .errors import UnsupportedOpError
from .mutation import drop_dead_code

aten = torch.ops.aten


def _bernoulli(graph, u, node):
    q = node.args[1] if len(node.args) > 1 else node.kwargs.get("p", 0.5)
    if isinstance(q, (torch.fx.Node, torch.Tensor)):  # bernoulli_(probabilities)
        return [(aten.lt.Tensor, (u, q), {}, torch.bool)]
    return [(aten.lt.Scalar, (u, float(q)), {}, torch.bool)]


def _bernoulli_probs(graph, u, node):
    return [(aten.lt.Tensor, (u, node.args[0]), {}, torch.bool)]


def _uniform(graph, u, node):
    low = node.args[1] if len(node.args) > 1 else node.kwargs.get("from", 0.0)
    high = node.args[2] if len(node.args) > 2 else node.kwargs.get("to", 1.0)
    if (low, high) == (0.0, 1.0):
        return []
    return [(aten.mul.Scalar, (u, float(high) - float(low)), {}, None),
            (aten.add.Scalar, ("prev", float(low)), {}, None)]


def _identity(graph, u, node):
    return []


# aten op -> the ops that compute its result from the uniform draw u:
# (op, args with "prev" for the previous result, kwargs, result dtype or None).
DRAWS: Dict[object, Callable] = {
    aten.bernoulli_.float: _bernoulli,
    aten.bernoulli_.Tensor: _bernoulli,
    aten.bernoulli.p: _bernoulli,
    aten.bernoulli.default: _bernoulli_probs,
    aten.rand_like.default: _identity,
    aten.rand.default: _identity,
    aten.uniform_.default: _uniform,
    aten.uniform.default: _uniform,
}


def _meta(shape, dtype):
    return torch.empty(tuple(shape), dtype=dtype, device="meta")


def lift_draws(gm: torch.fx.GraphModule, describe: Callable) -> List[Tuple[int, ...]]:
    """Replace every random op of ``gm`` by arithmetic on a new uniform input
    placeholder (appended after the existing ones, in graph order); return
    their shapes."""
    graph = gm.graph
    shapes: List[Tuple[int, ...]] = []
    last = [n for n in graph.nodes if n.op == "placeholder"][-1]
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in DRAWS:
            continue
        val = node.meta["val"]
        if val.dtype != torch.float32:
            raise UnsupportedOpError(f"{node.target} ({describe(node)}) draws {val.dtype}; the "
                                     "wsc exporter draws float32 only")
        shape = tuple(int(d) for d in val.shape)
        with graph.inserting_after(last):
            u = graph.placeholder(f"random_{len(shapes)}")
        u.meta = {k: v for k, v in node.meta.items() if k != "val"}
        u.meta["val"] = _meta(shape, torch.float32)
        last = u
        shapes.append(shape)
        result = u
        with graph.inserting_before(node):
            for op, args, kwargs, dtype in DRAWS[node.target](graph, u, node):
                args = tuple(result if a == "prev" else a for a in args)
                result = graph.call_function(op, args, kwargs)
                result.meta = dict(u.meta)
                result.meta["val"] = _meta(shape, dtype or torch.float32)
            if result.meta["val"].dtype != val.dtype:
                cast = graph.call_function(aten._to_copy.default, (result,), {"dtype": val.dtype})
                cast.meta = dict(u.meta)
                cast.meta["val"] = _meta(shape, val.dtype)
                result = cast
        node.replace_all_uses_with(result)
        graph.erase_node(node)
    if shapes:
        drop_dead_code(graph)  # the empty_like each bernoulli_ filled; in-place ops stay
        gm.recompile()
    return shapes


class _Replay(TorchDispatchMode):
    def __init__(self, draws: Sequence[torch.Tensor]):
        super().__init__()
        self.draws = list(draws)
        self.used = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func not in DRAWS:
            return func(*args, **kwargs)
        if self.used == len(self.draws):
            raise RuntimeError(f"replay: {func} is draw #{self.used}, but only "
                               f"{len(self.draws)} were given")
        u = self.draws[self.used]
        self.used += 1
        out_shape = args[0].shape if func not in (aten.rand.default,) else tuple(args[0])
        if tuple(u.shape) != tuple(out_shape):
            raise RuntimeError(f"replay: draw #{self.used - 1} has shape {list(u.shape)}, "
                               f"{func} needs {list(out_shape)}")
        result = u.clone()
        for op, op_args, op_kwargs, _ in DRAWS[func](None, u, _Args(args, kwargs)):
            op_args = tuple(result if a == "prev" else a for a in op_args)
            result = op(*op_args, **op_kwargs)
        result = result.to(args[0].dtype if isinstance(args[0], torch.Tensor)
                           and func is not aten.bernoulli.default else torch.float32)
        if func in (aten.bernoulli_.float, aten.bernoulli_.Tensor, aten.uniform_.default):
            return args[0].copy_(result)  # in place, like the op
        return result


class _Args:
    """Just enough of an fx node (args, kwargs) for the DRAWS functions."""

    def __init__(self, args, kwargs):
        self.args, self.kwargs = args, kwargs


@contextlib.contextmanager
def replay(draws: Sequence[torch.Tensor]):
    """Within the block, eager PyTorch's random ops (dropout, ...) take the
    given uniform draws in order instead of its own generator: the draws of
    ``Program.random_draws(step)`` make eager use wsc's dropout masks."""
    mode = _Replay(draws)
    with mode:
        yield mode
    if mode.used != len(mode.draws):
        raise RuntimeError(f"replay: {len(mode.draws)} draws given, {mode.used} used")


@contextlib.contextmanager
def out_of_place_dropout(model: torch.nn.Module) -> Iterator[None]:
    """Traces ``nn.Dropout(inplace=True)`` (torchvision's EfficientNet
    classifier, say) out of place. In place on a view (a flattened feature
    map), autograd's backward goes through ``as_strided`` copies that the
    trace cannot follow; the output is the same, and a model does not read
    a dropout's input again."""
    changed = [m for m in model.modules()
               if isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.inplace]
    for m in changed:
        m.inplace = False
    try:
        yield
    finally:
        for m in changed:
            m.inplace = True
