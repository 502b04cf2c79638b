"""Stacking, unbinding, vector products and slices of inputs, against eager.

* ``torch.stack`` (lowering/slicing.py: expand_shape + insert_slice; its
  backward selects) and ``torch.unbind`` (selects; its backward stacks).
* A Linear applied to a 1-D tensor: at::matmul runs
  ``mm(v.unsqueeze(0), W.t()).squeeze_(0)``, and the in-place ``squeeze_``
  used to leave the recorded ``mm`` result 1-D (invalid IR);
  lowering/inplace.py restore_traced_shapes. ``matrix @ vector`` (mv) and
  ``vector @ vector`` (dot) are decomposed while tracing. In-place view ops
  in a model (unsqueeze_, transpose_) and pow_.
* Strided slices of an input run through mlir_exec (its pass order).

Each model is checked two ways: the exported step run by upstream MLIR's CPU
JIT (mlir_exec) against eager loss and gradients, and a few training steps
on the emulator against eager (parity.train_both), on 1 and 2 systems.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import mlir_exec
from mlir_check import verify
from parity import check, train_both
from wsc.export import export_training_step


class Stacked(nn.Module):
    """Branches stacked on a new middle dim and a new last dim; the features
    unbound, reversed and stacked again."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 5)
        self.b = nn.Linear(6, 5)
        self.head = nn.Linear(20, 3)

    def forward(self, x):
        s = torch.stack([self.a(x), torch.tanh(self.b(x))], dim=1)          # (N, 2, 5)
        r = torch.stack(s.unbind(-1)[::-1], dim=-1)                         # features reversed
        t = torch.stack([s, r * s], dim=-1)                                 # (N, 2, 5, 2)
        return self.head(t.flatten(1))


class VectorProducts(nn.Module):
    """A Linear on a learnt 1-D query (mm + squeeze_), F.linear of a vector,
    activations @ vector (mv) and vector @ vector (dot)."""

    def __init__(self):
        super().__init__()
        self.query = nn.Parameter(torch.randn(6))
        self.fc = nn.Linear(6, 6)
        self.score = nn.Parameter(torch.randn(6))
        self.out = nn.Linear(6, 3)

    def forward(self, x):
        q = self.fc(self.query)                              # (6,)
        k = F.linear(torch.tanh(q), self.out.weight)         # (3,)
        h = torch.tanh(x * q)                                # (N, 6)
        gate = torch.sigmoid(h @ self.score).unsqueeze(1)    # (N, 1)
        return self.out(h * gate) + k * (self.score @ q)


class InPlaceViews(nn.Module):
    """In-place view ops on an activation another op read before (unsqueeze_,
    transpose_, whose overload is named unlike transpose.int's) and pow_."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)
        self.head = nn.Linear(5, 3)

    def forward(self, x):
        h = self.fc(x)
        g = h * 0.5 + 1.0
        h.unsqueeze_(1)
        h.transpose_(1, 2)                                   # (N, 5, 1)
        g.pow_(2)
        return self.head(h.squeeze(2) * g)


class SlicedInput(nn.Module):
    """Reads strided and offset slices of its input (subviews in the JIT)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x[:, 1:4]) * x[:, ::2][:, :3] + x[:, -3:]


MODELS = {"stacked": (Stacked, 6), "vector_products": (VectorProducts, 6),
          "in_place_views": (InPlaceViews, 6), "sliced_input": (SlicedInput, 7)}


def _case(name, batch=4):
    torch.manual_seed(0)
    make, width = MODELS[name]
    return make(), torch.randn(batch, width), torch.randint(0, 3, (batch,))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_exported_step_matches_eager(name):
    model, x, y = _case(name)
    loss_fn = nn.CrossEntropyLoss()
    text = export_training_step(model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.1),
                                x, y)
    verify(text)
    args = [p.detach().numpy() for p in model.state_dict().values()] + [x.numpy(), y.numpy()]
    got = mlir_exec.run(text, "train_step", args)
    loss = loss_fn(model(x), y)
    loss.backward()
    want = [loss.detach()] + [p.grad for p in model.parameters()]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=1e-6)


def test_linear_on_one_sample_exports_its_matrix_shapes():
    """``fc(x[0])``: the mm keeps its (1, 5) result; the squeeze_ collapses it."""

    class FirstSample(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 5)

        def forward(self, x):
            return self.fc(x) + self.fc(x[0])

    model, x = FirstSample(), torch.randn(4, 6)
    text = export_training_step(model, nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                                x, torch.randn(4, 5))
    verify(text)
    assert "outs(%mm_1.1 : tensor<1x5xf32>) -> tensor<1x5xf32>" in text
    assert "tensor.collapse_shape %mm_1 [[0, 1]] : tensor<1x5xf32> into tensor<5xf32>" in text


# vector_products runs in weight-streaming mode: in layer-pipelined mode (what
# "auto" picks on one system) wsc-opt schedules fc's weight update before the
# query's gradient reads fc.weight, which the runtime refuses ("parameter
# 'fc.weight' is read after its weight update"), a compiler bug reported
# separately; the exported step itself is right (test_exported_step_matches_eager).
@pytest.mark.parametrize("systems", [1, 2])
@pytest.mark.parametrize("name,mode", [("stacked", "auto"), ("in_place_views", "auto"),
                                       ("vector_products", "weight_streaming")])
def test_trains_like_pytorch(name, mode, systems):
    model, _, _ = _case(name)
    torch.manual_seed(1)
    data = [(torch.randn(4, MODELS[name][1]), torch.randint(0, 3, (4,))) for _ in range(3)]
    prog, reference, ours, theirs = train_both(model, nn.CrossEntropyLoss(), data,
                                               systems=systems, mode=mode)
    check(prog, reference, ours, theirs)
