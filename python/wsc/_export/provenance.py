"""Which nn.Module each captured aten op came from (for error messages).

Forward: module pre/post hooks keep a stack of the modules being run, and
every fx node created while tracing is stamped with the top of that stack.

Backward: autograd runs outside any module, so each module's post hook also
claims the autograd nodes (grad_fn) its forward created. During the backward
pass a hook on each grad_fn stamps the fx nodes created since the previous
grad_fn finished with the module that owns it.

Getting at the graph make_fx is building uses torch's private dispatch-mode
stack; if that ever fails, provenance quietly degrades to "unknown".
"""

import contextlib
from typing import Dict, List, NamedTuple, Optional, Tuple

import torch
import torch.fx

_META_KEY = "wsc_scope"


class Scope(NamedTuple):
    kind: str  # "module", "root" or "loss"
    path: str  # dotted module path (empty for root / loss)
    cls: str   # class (or function) name

    def __str__(self):
        if self.kind == "root":
            return f"the top-level module, {self.cls}"
        if self.kind == "loss":
            return f"the loss function, {self.cls}"
        return f"module '{self.path}', {self.cls}"


def origin(node: torch.fx.Node) -> Tuple[str, Optional[Scope]]:
    """(phase, scope) of a captured node: "forward" or "backward", and the
    module it came from (None when outside any module or unknown)."""
    return node.meta.get(_META_KEY, ("forward", None))


def set_origin(node: torch.fx.Node, phase: str, scope: Optional[Scope]) -> None:
    node.meta[_META_KEY] = (phase, scope)


def describe(node: torch.fx.Node) -> str:
    """A phrase like "from module 'encoder.2', Cumsum" for an error message."""
    phase, scope = origin(node)
    if scope is None:
        return "from outside any module" + (" (backward pass)" if phase == "backward" else "")
    return f"from the backward of {scope}" if phase == "backward" else f"from {scope}"


def _tensors(value) -> List[torch.Tensor]:
    flat, _ = torch.utils._pytree.tree_flatten(value)
    return [t for t in flat if isinstance(t, torch.Tensor)]


class Provenance:
    def __init__(self, model: torch.nn.Module, loss_fn=None):
        self.model = model
        self._modules = [(Scope("root" if path == "" else "module", path, type(m).__name__), m)
                         for path, m in model.named_modules()]
        name = type(loss_fn).__name__ if isinstance(loss_fn, torch.nn.Module) else getattr(
            loss_fn, "__name__", type(loss_fn).__name__)
        self.loss_scope = Scope("loss", "", name)
        self._stack: List[Scope] = []
        self._stops: List[set] = []
        self._owner: Dict[object, Scope] = {}  # grad_fn -> scope that created it
        self._phase = "forward"
        self._pending: List[torch.fx.Node] = []
        self._running: Optional[Scope] = None  # owner of the grad_fn running now

    # ------------------------------------------------------------ tracing
    @contextlib.contextmanager
    def hooks(self):
        """Install the module hooks for the duration of the capture."""
        handles = []
        self._stack.clear()  # a capture that raised left its scopes (see scope())
        self._stops.clear()
        self._phase, self._running = "forward", None
        for scope, module in self._modules:
            handles.append(module.register_forward_pre_hook(self._pre_hook(scope)))
            handles.append(module.register_forward_hook(self._post_hook(scope)))
        try:
            yield
        finally:
            for h in handles:
                h.remove()

    def attach_to_trace(self) -> Optional[torch.fx.Graph]:
        """Call inside the traced function: stamp every node make_fx creates.
        Returns the graph being built (None if it cannot be found)."""
        graph = self._current_graph()
        if graph is None:
            return None
        create_node = graph.create_node

        def stamped_create_node(*args, **kwargs):
            node = create_node(*args, **kwargs)
            if self._phase == "forward":
                node.meta[_META_KEY] = ("forward", self._stack[-1] if self._stack else None)
            else:
                node.meta[_META_KEY] = ("backward", None)
                self._pending.append(node)
            return node

        graph.create_node = stamped_create_node  # instance attribute, dropped by detach()
        self._graph = graph
        return graph

    def detach(self):
        graph = getattr(self, "_graph", None)
        if graph is not None and "create_node" in vars(graph):
            del graph.create_node

    @contextlib.contextmanager
    def scope(self, scope: Scope):
        """Treat the ops run inside as coming from ``scope`` (used for the loss).

        An exception leaves ``scope`` on the stack, as it leaves a module whose
        forward raised (its post hook never runs), so where() can name it."""
        self._stack.append(scope)
        self._stops.append(set())
        yield
        self._stack.pop()
        self._stops.pop()

    def claim(self, outputs, scope: Scope, inputs=()):
        """Record ``scope`` as the owner of the unowned grad_fns between
        ``inputs`` and ``outputs``."""
        self._claim(outputs, scope, {t.grad_fn for t in _tensors(inputs) if t.grad_fn is not None})

    @contextlib.contextmanager
    def backward(self, loss: torch.Tensor):
        """Wrap the autograd.grad call: attribute backward nodes to grad_fns."""
        for fn in self._reachable([loss]):
            if type(fn).__name__ != "AccumulateGrad":
                fn.register_hook(self._grad_fn_hook(self._owner.get(fn)))
                fn.register_prehook(self._running_hook(self._owner.get(fn)))
        self._phase = "backward"
        yield  # an exception stays in the backward phase, for where()
        self._phase = "forward"
        self._pending.clear()

    def where(self) -> str:
        """Where the trace currently is, e.g. after it raised mid-forward or
        in the backward of some grad_fn."""
        if self._phase == "backward":
            return (f"from the backward of {self._running}" if self._running
                    else "from outside any module (backward pass)")
        return f"from {self._stack[-1]}" if self._stack else "from outside any module"

    # ------------------------------------------------------------ internals
    @staticmethod
    def _current_graph() -> Optional[torch.fx.Graph]:
        try:
            from torch.utils._python_dispatch import _get_current_dispatch_mode_stack
            for mode in reversed(_get_current_dispatch_mode_stack()):
                graph = getattr(getattr(mode, "tracer", None), "graph", None)
                if isinstance(graph, torch.fx.Graph):
                    return graph
        except Exception:  # private API; provenance is best effort
            pass
        return None

    def _pre_hook(self, scope):
        def hook(module, inputs):
            self._stack.append(scope)
            self._stops.append({t.grad_fn for t in _tensors(inputs) if t.grad_fn is not None})

        return hook

    def _post_hook(self, scope):
        def hook(module, inputs, output):
            self._stack.pop()
            self._claim(output, scope, self._stops.pop())

        return hook

    @staticmethod
    def _reachable(tensors, stop=frozenset()):
        todo = [t.grad_fn for t in _tensors(tensors) if t.grad_fn is not None]
        seen = set()
        while todo:
            fn = todo.pop()
            if fn in seen or fn in stop:
                continue
            seen.add(fn)
            todo.extend(nf for nf, _ in fn.next_functions if nf is not None)
        return seen

    def _claim(self, outputs, scope, stop):
        # Inner modules finish first, so they keep their own grad_fns.
        for fn in self._reachable(outputs, stop):
            self._owner.setdefault(fn, scope)

    def _running_hook(self, scope):
        def hook(grad_outputs):
            self._running = scope

        return hook

    def _grad_fn_hook(self, scope):
        def hook(grad_inputs, grad_outputs):
            for node in self._pending:
                node.meta[_META_KEY] = ("backward", scope)
            self._pending.clear()

        return hook
