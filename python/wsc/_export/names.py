"""Node names for the graph make_fx builds, in constant time each.

fx names a node after its op (``view``, ``view_1``, ``view_2``, ..). Its
namer (``torch.fx.graph._Namespace.create_name``) finds the next free suffix
by trying ``view``, ``view_1``, .. from the start every time, so a graph
with n nodes of one op costs n^2 / 2 tries: tens of millions, and seconds,
for the ~3,000 views of a 96-block GPT-3 step. ``LinearNamespace`` gives the
same names in the same order, but remembers where the search for each name
stopped. fx never frees a name (erasing a node keeps it taken), so every
suffix below that point stays taken.

The SSA names of the exported MLIR come from these node names, so they are
the same either way.
"""

import torch.fx
from torch.fx.graph import _Namespace

# The state _Namespace keeps (torch 1.13 to 2.x); with any other layout the
# graph keeps fx's own namer.
_STATE = {"_obj_to_name", "_unassociated_names", "_used_names", "_illegal_char_regex",
          "_name_suffix_regex"}


class LinearNamespace(_Namespace):
    """fx's namer, taking over its state, with a resume point per base name."""

    def __init__(self, original: _Namespace):  # pylint: disable=super-init-not-called
        self.__dict__.update(vars(original))
        self._next_suffix = {}  # base name -> the first suffix that may be free

    def create_name(self, candidate: str, obj) -> str:
        if obj is not None:  # names bound to objects (code generation): fx's way
            return super().create_name(candidate, obj)
        candidate = self._illegal_char_regex.sub("_", candidate)
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        if self._name_suffix_regex.match(candidate) is not None:
            return super().create_name(candidate, obj)  # an explicit suffix: rare
        base = candidate
        num = self._next_suffix.get(base, 0)
        name = base if num == 0 else f"{base}_{num}"
        while name in self._used_names or self._is_illegal_name(name, None):
            num += 1
            name = f"{base}_{num}"
        self._next_suffix[base] = num + 1
        self._used_names.setdefault(name, 0)
        self._unassociated_names.add(name)
        return name


def use_linear_names(graph: torch.fx.Graph) -> None:
    """From now on, name ``graph``'s new nodes with a LinearNamespace."""
    namespace = graph._graph_namespace
    if type(namespace) is _Namespace and _STATE <= set(vars(namespace)):
        graph._graph_namespace = LinearNamespace(namespace)
