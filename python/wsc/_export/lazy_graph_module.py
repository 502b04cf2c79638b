"""A GraphModule that writes its Python code when it is first needed.

``torch.fx.GraphModule(root, graph)`` generates and compiles the Python code
of its ``forward`` at once: for the 21,680 nodes of a GPT-3 step that is
more than a second, and the exporter never runs the module (it lowers the
graph). ``LazyGraphModule`` defers that to the first call, or to the first
read of ``code`` or ``str()``; an explicit ``recompile()`` compiles at once,
as usual. repeated.py builds its instantiated graphs with it.
"""

import torch
import torch.fx


class LazyGraphModule(torch.fx.GraphModule):
    @property
    def graph(self) -> torch.fx.Graph:
        return self._graph

    @graph.setter
    def graph(self, g: torch.fx.Graph) -> None:  # GraphModule's setter, minus recompile()
        assert isinstance(g, torch.fx.Graph), f"Expected a Graph instance, but got {type(g)}"
        self._graph = g
        g.owning_module = self
        vars(self).pop("_code", None)  # stale: _materialize writes it again

    def _materialize(self) -> None:
        if "_code" not in vars(self):
            self.recompile()

    @property
    def code(self) -> str:
        self._materialize()
        return self._code

    def __call__(self, *args, **kwargs):
        self._materialize()
        return torch.nn.Module.__call__(self, *args, **kwargs)

    def __str__(self) -> str:
        self._materialize()
        return super().__str__()
