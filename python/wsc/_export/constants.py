"""Plain tensors the traced step reads become constants of the graph.

A loss's class weights (``CrossEntropyLoss(weight=w)``,
``BCEWithLogitsLoss(pos_weight=p)``) or a tensor attribute that is neither a
parameter nor a buffer are real tensors inside a fake-tensor trace, which
fake tensors refuse. This mode lets them in: make_fx records each one as a
``_tensor_constant`` of the graph module (its real value, which the
lowering prints as a literal), and the mode computes on a fake copy.

A parameter or buffer of the model read that way (outside the traced
``functional_call``, e.g. a regularizer over ``model.parameters()`` in the
loss) is trained state, not a constant: it keeps the fake-tensor error.
So does any tensor that requires grad.
"""

from typing import Iterable

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.utils._pytree import tree_map


class ConstantsMode(FakeTensorMode):
    """A FakeTensorMode that fakes the plain tensors an op receives."""

    def __init__(self, state: Iterable[torch.Tensor], **kwargs):
        super().__init__(**kwargs)
        self.state_ids = {id(t) for t in state}

    def _constant(self, value):
        if (isinstance(value, torch.Tensor) and not isinstance(value, FakeTensor)
                and not value.requires_grad and id(value) not in self.state_ids
                and not value.is_meta):
            return self.from_tensor(value)  # memoised: one fake per tensor
        return value

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func not in self.lift_fns:  # torch.tensor(..) in the step: the mode fakes it itself
            args, kwargs = tree_map(self._constant, (args, kwargs or {}))
        return super().__torch_dispatch__(func, types, args, kwargs)


def model_state(model) -> list:
    """The tensors of ``model`` that must never become constants."""
    if not isinstance(model, torch.nn.Module):
        return []
    return list(model.parameters()) + list(model.buffers())
