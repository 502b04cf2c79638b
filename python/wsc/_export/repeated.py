"""Capture a stack of identical blocks at a small depth, then instantiate it.

A GPT-3 step is 96 identical transformer blocks; tracing each one with
make_fx took most of the export. When a model holds an ``nn.ModuleList`` or
``nn.Sequential`` of at least ``MIN_DEPTH`` structurally identical blocks
(``find_stack``: same class tree, same plain attributes, same parameter and
buffer names, shapes and dtypes, no hooks, no state shared with anything
else), the step is traced with the stack cut to its first 4 blocks
(``TEMPLATE_DEPTH``). Their nodes fall into regions, in the order make_fx
records them::

    P  F0 F1 F2 F3  M  B3 B2 B1 B0  S

(P: before the blocks; F_b, B_b: the forward and backward ops of block b, by
the module provenance.py stamped on each node; M: after the last block's
forward up to its backward, e.g. the head and the loss; S: the rest).
``instantiate`` writes the graph of the whole stack from them: every block
copies one template block's forward and one's backward (``roles``; a middle
block's forward copies F2, whose predecessor is a middle block, its
backward B1, whose successor is one). Each copy reads its own block's
parameters and its neighbours' copies: a node of a neighbour's region is
found at the same distance from the region's end (the last block's backward
lacks the gradient sum the others start with, so regions of one phase may
differ at their start, never at their end). Nodes are created in the order
make_fx would create them and named by the same namer, so the graph is the
one a full trace gives, names included.

That rests on the blocks being run the same way at any depth: one after
another, nothing between them, the rest of the model not depending on the
depth. So the step is also traced at depth 5 (``CHECK_DEPTH``), and the
instance for depth 5 built from the depth-4 trace must equal it node for node
(op, target, name, arguments, shapes, provenance); otherwise ``capture``
returns None and the caller traces every block, as before. Code that treats
block 50 unlike block 3, or reads the depth only beyond 5, escapes the check
(docs/ExportedIR.md, "Deep stacks of identical blocks").
"""

import contextlib
import re
from collections import OrderedDict
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

import torch
import torch.fx
from torch.fx.node import map_arg

from .lazy_graph_module import LazyGraphModule
from .names import use_linear_names
from .provenance import origin, set_origin

MIN_DEPTH = 6        # stacks this deep or deeper are instantiated
TEMPLATE_DEPTH = 4   # see roles()
CHECK_DEPTH = 5
_SUFFIX = re.compile(r"(.*)_(\d+)$")
_PLACEHOLDER = re.compile(r"(\D*)(\d+)(.*)")


class Stack(NamedTuple):
    path: str                 # dotted path of the ModuleList / Sequential ("" for the model)
    module: torch.nn.Module
    depth: int

    def prefix(self) -> str:
        return f"{self.path}." if self.path else ""


class Traced(NamedTuple):
    """What the caller's trace function returns for the model as it is now."""
    graph: torch.fx.GraphModule
    state: List[str]            # the first placeholders: parameters then buffers, by name
    state_outputs_at: Optional[int]  # output index where one entry per state name starts


class NotRepeatable(Exception):
    """The traced stack does not have the shape instantiate needs."""


# ------------------------------------------------------------ finding the stack


def _tensor_spec(t):
    return None if t is None else (tuple(t.shape), t.dtype, t.requires_grad)


def _plain_equal(a, b) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (bool, int, float, str, bytes, type(None), torch.dtype, torch.device,
                      set, frozenset)):
        return a == b
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_plain_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_plain_equal(a[k], b[k]) for k in a)
    return False  # tensors, objects: equal only as the same object


def _same_module(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    if type(a) is not type(b):
        return False
    va, vb = vars(a), vars(b)
    if set(va) != set(vb):
        return False
    for key, x in va.items():
        y = vb[key]
        if key in ("_parameters", "_buffers"):
            if list(x) != list(y) or any(_tensor_spec(x[k]) != _tensor_spec(y[k]) for k in x):
                return False
        elif key == "_modules":
            if list(x) != list(y):
                return False
        elif key.endswith("hooks") and isinstance(x, dict):
            if x or y:
                return False
        elif not _plain_equal(x, y):
            return False
    return True


def same_structure(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    """Same class tree, plain attributes, parameter and buffer specs; no hooks."""
    sub_a, sub_b = list(a.named_modules()), list(b.named_modules())
    return len(sub_a) == len(sub_b) and all(
        na == nb and _same_module(ma, mb) for (na, ma), (nb, mb) in zip(sub_a, sub_b))


def _owns_its_state(stack: Stack, aliases: Dict[int, List[str]]) -> bool:
    """Every parameter and buffer of block j is named only under block j."""
    for j, block in enumerate(stack.module.children()):
        inside = f"{stack.prefix()}{j}."
        for t in list(block.parameters()) + list(block.buffers()):
            if not all(name.startswith(inside) for name in aliases.get(id(t), [])):
                return False
    return True


def find_stack(model: torch.nn.Module, aliases: Dict[int, List[str]]) -> Optional[Stack]:
    """The ModuleList / Sequential of at least MIN_DEPTH identical blocks with
    the most parameters, or None. ``aliases``: capture.state_names(model)."""
    counts: Dict[int, int] = {}
    for _, m in model.named_modules(remove_duplicate=False):
        counts[id(m)] = counts.get(id(m), 0) + 1
    best, best_size = None, -1
    for path, m in model.named_modules():
        if not isinstance(m, (torch.nn.ModuleList, torch.nn.Sequential)):
            continue
        blocks = list(m._modules.values())
        if len(blocks) < MIN_DEPTH or any(b is None or counts[id(b)] != 1 for b in blocks):
            continue
        if list(m._modules) != [str(j) for j in range(len(blocks))]:
            continue
        if not all(same_structure(blocks[0], b) for b in blocks[1:]):
            continue
        stack = Stack(path, m, len(blocks))
        if not _owns_its_state(stack, aliases):
            continue
        size = sum(p.numel() for p in m.parameters())
        if size > best_size:
            best, best_size = stack, size
    return best


@contextlib.contextmanager
def truncated(stack: Stack, depth: int):
    """Within the block, the stack holds only its first ``depth`` blocks."""
    modules = stack.module._modules
    vars(stack.module)["_modules"] = OrderedDict(list(modules.items())[:depth])
    try:
        yield
    finally:
        vars(stack.module)["_modules"] = modules


# --------------------------------------------------------------------- regions


class _Regions:
    """The P, F_b, M, B_b, S regions of a graph traced with ``depth`` blocks."""

    def __init__(self, gm: torch.fx.GraphModule, stack: Stack, depth: int):
        self.depth = depth
        order = (["P"] + [("F", b) for b in range(depth)] + ["M"]
                 + [("B", b) for b in reversed(range(depth))] + ["S"])
        rank = {key: i for i, key in enumerate(order)}
        self.nodes: Dict[object, List[torch.fx.Node]] = {key: [] for key in order}
        self.of: Dict[torch.fx.Node, object] = {}
        self.placeholders, self.output = [], None
        at = 0
        for node in gm.graph.nodes:
            if node.op == "placeholder":
                self.placeholders.append(node)
                continue
            if node.op == "output":
                self.output = node
                continue
            block = _block_of(node, stack.prefix())
            if block is not None:
                key = ("F" if origin(node)[0] == "forward" else "B", block)
                if block >= depth or rank[key] < at:
                    raise NotRepeatable(f"{node.name} of block {block} is out of order")
                at = rank[key]
            else:  # outside the blocks: P, M or S, never between two blocks
                key = order[at]
                if key == ("F", depth - 1):
                    at = rank["M"]
                elif key == ("B", 0):
                    at = rank["S"]
                elif key not in ("P", "M", "S"):
                    raise NotRepeatable(f"{node.name} runs between two blocks")
                key = order[at]
            self.of[node] = key
            self.nodes[key].append(node)
        forward = [self.nodes[("F", b)] for b in range(depth)]
        backward = [self.nodes[("B", b)] for b in range(depth)]
        if not all(forward) or (any(backward) and not all(backward)):
            raise NotRepeatable("a block without forward or backward ops")
        self.position = {n: i for nodes in self.nodes.values() for i, n in enumerate(nodes)}

    def counterpart(self, node: torch.fx.Node, block: int) -> torch.fx.Node:
        """The node of ``block``'s region (same phase) at ``node``'s distance from the end."""
        phase = self.of[node][0]
        mine, theirs = self.nodes[self.of[node]], self.nodes[(phase, block)]
        back = len(mine) - self.position[node]
        if back > len(theirs) or theirs[-back].target != node.target:
            raise NotRepeatable(f"{node.name} has no counterpart in block {block}")
        return theirs[-back]


def _block_of(node: torch.fx.Node, prefix: str) -> Optional[int]:
    scope = origin(node)[1]
    if scope is None or scope.kind != "module" or not scope.path.startswith(prefix):
        return None
    head = scope.path[len(prefix):].split(".", 1)[0]
    return int(head) if head.isdigit() else None


def _block_state(name: str, prefix: str) -> Optional[Tuple[int, str]]:
    if not name.startswith(prefix):
        return None
    head, _, rest = name[len(prefix):].partition(".")
    return (int(head), rest) if head.isdigit() and rest else None


# ----------------------------------------------------------------- instantiate


def _base_name(node: torch.fx.Node) -> str:
    """The name make_fx asked the namer for (``view_3`` -> ``view``)."""
    match = _SUFFIX.match(node.name)
    return match.group(1) if match else node.name


def _with_block(scope, prefix: str, old: int, new: int):
    if scope is None or old == new:
        return scope
    head = f"{prefix}{old}"
    return scope._replace(path=f"{prefix}{new}" + scope.path[len(head):])


def roles(phase: str, depth: int, template_depth: int) -> List[int]:
    """The template block whose region each of ``depth`` blocks copies.

    A block's forward reads its predecessor, its backward its successor, so
    each phase's middle blocks copy a template block whose neighbour on that
    side is a middle block too: forward block 2 (after block 1), backward
    block 1 (before block 2). The first two forwards, the last forward, the
    first backward and the last two backwards copy their own counterparts."""
    last = template_depth - 1
    if phase == "F":
        return [j if j < 2 else last if j == depth - 1 else 2 for j in range(depth)]
    return [0 if j == 0 else last - (depth - 1 - j) if j >= depth - 2 else 1
            for j in range(depth)]


def instantiate(template: Traced, stack: Stack, regions: _Regions, depth: int,
                state: List[str]) -> torch.fx.GraphModule:
    """The graph of the step with ``depth`` blocks, from the template's regions.
    ``state``: the names of the parameters and buffers at that depth."""
    prefix, last = stack.prefix(), regions.depth - 1
    role = {phase: roles(phase, depth, regions.depth) for phase in ("F", "B")}
    graph = torch.fx.Graph()
    use_linear_names(graph)
    old = regions.placeholders
    n_old_state, n_state = len(template.state), len(state)
    numbered = _PLACEHOLDER.fullmatch(old[0].name)
    if numbered is None or any(p.name != _placeholder_name(numbered, i) for i, p in enumerate(old)):
        raise NotRepeatable("placeholders not numbered in order")
    by_name = {name: old[i] for i, name in enumerate(template.state)}
    new_placeholders, state_node = [], {}
    for k in range(n_state + len(old) - n_old_state):
        if k < n_state:
            where = _block_state(state[k], prefix)
            key = state[k] if where is None else f"{prefix}{role['F'][where[0]]}.{where[1]}"
            source = by_name[key]
        else:
            source = old[k - n_state + n_old_state]
        name = _placeholder_name(numbered, k)
        node = graph.create_node("placeholder", name, source.args, {}, name, source.type)
        node.meta = dict(source.meta)
        new_placeholders.append(node)
        if k < n_state:
            state_node[state[k]] = node
    placeholder_index = {p: i for i, p in enumerate(old)}
    copies: Dict[Tuple[str, int], Dict[torch.fx.Node, torch.fx.Node]] = {}
    single: Dict[torch.fx.Node, torch.fx.Node] = {}

    def shifted(b, j, t):
        """The block that template block ``b`` stands for, read by block ``j``
        (a copy of template block ``t``; None, None: read outside the blocks)."""
        if j is None:  # only the first and last blocks are known from outside
            if b not in (0, last):
                raise NotRepeatable("a middle block read from outside the stack")
            return 0 if b == 0 else depth - 1
        jj = j + b - t
        if not 0 <= jj < depth:
            raise NotRepeatable("a block reads one beyond the stack")
        return jj

    def resolve(u: torch.fx.Node, j: Optional[int], t: Optional[int]) -> torch.fx.Node:
        """The new node for template node ``u`` read by block ``j``, a copy of
        template block ``t`` (None, None: read outside the blocks)."""
        if u.op == "placeholder":
            i = placeholder_index[u]
            if i >= n_old_state:
                return new_placeholders[i - n_old_state + n_state]
            where = _block_state(template.state[i], prefix)
            if where is None:
                return state_node[template.state[i]]
            return state_node[f"{prefix}{shifted(where[0], j, t)}.{where[1]}"]
        key = regions.of[u]
        if not isinstance(key, tuple):
            if u not in single:
                raise NotRepeatable(f"{u.name} is read before it is made")
            return single[u]
        phase, b = key
        jj = shifted(b, j, t)
        made = copies.get((phase, jj))
        if made is None:
            raise NotRepeatable(f"{u.name} is read before it is made")
        tt = role[phase][jj]
        return made[u if tt == b else regions.counterpart(u, tt)]

    def copy(nodes, j, t, made):
        for u in nodes:
            if u.op == "get_attr" and j is not None:
                raise NotRepeatable("a block reads a constant")
            args = map_arg(u.args, lambda a: resolve(a, j, t))
            kwargs = map_arg(u.kwargs, lambda a: resolve(a, j, t))
            node = graph.create_node(u.op, u.target, args, kwargs, _base_name(u), u.type)
            node.meta = dict(u.meta)
            if j is not None:
                phase, scope = origin(u)
                set_origin(node, phase, _with_block(scope, prefix, t, j))
            made[u] = node

    copy(regions.nodes["P"], None, None, single)
    for j in range(depth):
        t = role["F"][j]
        copies[("F", j)] = {}
        copy(regions.nodes[("F", t)], j, t, copies[("F", j)])
    copy(regions.nodes["M"], None, None, single)
    for j in reversed(range(depth)):
        t = role["B"][j]
        copies[("B", j)] = {}
        copy(regions.nodes[("B", t)], j, t, copies[("B", j)])
    copy(regions.nodes["S"], None, None, single)

    def outside(u):
        return map_arg(u, lambda a: resolve(a, None, None))

    outputs = list(regions.output.args[0])
    first = template.state_outputs_at
    if first is None:
        results = [outside(u) for u in outputs]
    else:  # one entry per parameter and buffer: a block's from its backward's template
        results = [outside(u) for u in outputs[:first]]
        old_state_out = dict(zip(template.state, outputs[first:first + n_old_state]))
        for name in state:
            where = _block_state(name, prefix)
            if where is None:
                results.append(outside(old_state_out[name]))
                continue
            j, t = where[0], role["B"][where[0]]
            results.append(map_arg(old_state_out[f"{prefix}{t}.{where[1]}"],
                                   lambda a, j=j, t=t: resolve(a, j, t)))
        results += [outside(u) for u in outputs[first + n_old_state:]]
    out = graph.output(tuple(results), type_expr=regions.output.type)
    out.meta = dict(regions.output.meta)
    return LazyGraphModule(template.graph, graph)


def _placeholder_name(numbered: re.Match, k: int) -> str:
    """make_fx numbers the step's arguments: ``arg0_1``, ``arg1_1``, .."""
    return f"{numbered.group(1)}{k}{numbered.group(3)}"


# ----------------------------------------------------------------------- check


def _shapes(value):
    if isinstance(value, torch.Tensor):
        return (tuple(value.shape), value.dtype)
    if isinstance(value, (tuple, list)):
        return tuple(_shapes(v) for v in value)
    return value


def same_graph(a: torch.fx.GraphModule, b: torch.fx.GraphModule) -> bool:
    """Node for node: op, target, name, arguments, shapes, provenance, constants."""
    nodes_a, nodes_b = list(a.graph.nodes), list(b.graph.nodes)
    if len(nodes_a) != len(nodes_b):
        return False
    index_a = {n: i for i, n in enumerate(nodes_a)}
    index_b = {n: i for i, n in enumerate(nodes_b)}
    for x, y in zip(nodes_a, nodes_b):
        if (x.op, x.target, x.name) != (y.op, y.target, y.name) or origin(x) != origin(y):
            return False
        if _shapes(x.meta.get("val")) != _shapes(y.meta.get("val")):
            return False
        if map_arg((x.args, x.kwargs), index_a.get) != map_arg((y.args, y.kwargs), index_b.get):
            return False
        if x.op == "get_attr":
            ca, cb = getattr(a, x.target), getattr(b, y.target)
            if ca.dtype != cb.dtype or ca.shape != cb.shape or not torch.equal(ca, cb):
                return False
    return True


# ----------------------------------------------------------------------- entry


def capture(model: torch.nn.Module, aliases: Dict[int, List[str]], state: List[str],
            trace: Callable[[], Traced]) -> Optional[torch.fx.GraphModule]:
    """The step's graph built from a depth-4 trace of its largest stack of
    identical blocks, checked against a depth-5 trace; None when the model has
    no such stack or the check fails (then trace every block). ``trace``
    traces ``model`` as it is when called; ``state`` names the full model's
    parameters and buffers in argument order."""
    stack = find_stack(model, aliases)
    if stack is None:
        return None
    try:
        with truncated(stack, TEMPLATE_DEPTH):
            template = trace()
        with truncated(stack, CHECK_DEPTH):
            check = trace()
        regions = _Regions(template.graph, stack, TEMPLATE_DEPTH)
        if not same_graph(instantiate(template, stack, regions, CHECK_DEPTH, check.state),
                          check.graph):
            return None
        return instantiate(template, stack, regions, stack.depth, state)
    except NotRepeatable:
        return None
    except Exception:  # pylint: disable=broad-except
        return None  # the full trace raises it again, with the whole model's names
