"""Numerics: the captured graph and the exported MLIR both match PyTorch eager.

* The fx graph make_fx captured is run on real tensors and compared with
  eager autograd (validates the capture and the decompositions).
* The exported MLIR is compiled and run with upstream MLIR's CPU JIT
  (mlir-opt + mlir-runner, see mlir_exec.py) and compared with eager at the
  tolerance the end-to-end tests use (rtol 1e-4).
"""

import numpy as np
import pytest
import torch
from torch import nn

import mlir_exec
from export_models import CASES, OddMLP
from wsc._export.capture import capture_training
from wsc.export import export_inference, export_training_step


def _case(name):
    torch.manual_seed(0)
    model, loss_fn, x, y = CASES[name]()
    return model, loss_fn, x, y


def _eager(model, loss_fn, x, y):
    model.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    return [loss.detach()] + [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("case", sorted(CASES))
def test_captured_graph_matches_eager(case):
    model, loss_fn, x, y = _case(case)
    captured = capture_training(model, loss_fn, x, y)
    params = [p.detach() for _, p in captured.params]
    got = captured.graph(*params, x, y)
    want = _eager(model, loss_fn, x, y)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6)




def _check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = w.detach().numpy()
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_exported_training_step_matches_eager(case):
    model, loss_fn, x, y = _case(case)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    text = export_training_step(model, loss_fn, opt, x, y)
    args = [p.detach().numpy() for p in model.state_dict().values()] + [x.numpy(), y.numpy()]
    _check(mlir_exec.run(text, "train_step", args), _eager(model, loss_fn, x, y))


def test_exported_inference_matches_eager():
    torch.manual_seed(0)
    model = OddMLP()
    x = torch.randn(12, 37)
    text = export_inference(model, x)
    args = [p.detach().numpy() for p in model.state_dict().values()] + [x.numpy()]
    with torch.no_grad():
        _check(mlir_exec.run(text, "forward", args), [model(x)])


def test_cross_entropy_extreme_logits_are_stable():
    # Large logits: log_softmax must subtract the max, or exp overflows.
    model = nn.Linear(3, 4)
    with torch.no_grad():
        model.weight.mul_(200.0)
    loss_fn = nn.CrossEntropyLoss()
    x, y = torch.randn(6, 3), torch.tensor([0, 1, 2, 3, 0, 1])
    text = export_training_step(model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
    args = [p.detach().numpy() for p in model.state_dict().values()] + [x.numpy(), y.numpy()]
    got = mlir_exec.run(text, "train_step", args)
    assert all(np.isfinite(g).all() for g in got)
    _check(got, _eager(model, loss_fn, x, y))
