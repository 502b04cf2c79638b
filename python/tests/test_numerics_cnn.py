"""Numerics of the CNN lowerings (conv, batch norm, pooling) and of buffers.

As in test_numerics.py: the captured fx graph and the exported MLIR (run by
mlir-opt + mlir-runner, mlir_exec.py) must match PyTorch eager, here for the
loss, every gradient AND every updated buffer (BatchNorm running statistics
and num_batches_tracked, compared with the module's buffers after an eager
training-mode forward).
"""

import copy

import numpy as np
import pytest
import torch
from torch import nn

import mlir_exec
from cnn_models import CASES, MaskedBuffers, ResNet, TiePool, _ties
from wsc._export.capture import capture_training
from wsc.export import export_inference, export_training_step


def _case(name):
    torch.manual_seed(0)
    return CASES[name]()


def state(model):
    """(parameters, buffers) in the exported argument order (docs/ExportedIR.md)."""
    params = {id(p) for p in model.parameters()}
    entries = model.state_dict(keep_vars=True)
    persistent = [v for v in entries.values() if id(v) not in params]
    extra = [b for b in model.buffers() if all(b is not v for v in persistent)]
    return [v for v in entries.values() if id(v) in params], persistent + extra


def _arrays(tensors):
    return [t.detach().numpy() for t in tensors]


def _eager(model, loss_fn, x, y):
    """Loss, gradients and buffers after one eager training step of a copy."""
    model = copy.deepcopy(model)
    loss = loss_fn(model(x), y)
    loss.backward()
    params, buffers = state(model)
    return [loss.detach()] + [p.grad for p in params], buffers


def _check(got, want, rtol=1e-4, atol=1e-6):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = w.detach().numpy()
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", sorted(CASES))
def test_captured_graph_matches_eager(case):
    model, loss_fn, x, y = _case(case)
    captured = capture_training(model, loss_fn, x, y)
    params, buffers = state(model)
    got = captured.graph(*[p.detach() for p in params], *[b.detach().clone() for b in buffers],
                         x, y)
    want, after = _eager(model, loss_fn, x, y)
    updated = dict(zip([n for n, _ in captured.buffers], after))
    want += [updated[n] for n in captured.buffer_updates]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_exported_training_step_matches_eager(case):
    model, loss_fn, x, y = _case(case)
    text = export_training_step(model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
    params, buffers = state(model)
    got = mlir_exec.run(text, "train_step", _arrays(params + buffers) + [x.numpy(), y.numpy()])
    want, after = _eager(model, loss_fn, x, y)
    # Every buffer of these models is BatchNorm state, and a training step updates all of it.
    _check(got, want + after)


def _first_or_last_routing(x, g, k, s, p, last):
    """Max-pool backward by brute force, sending each gradient to the first
    (as PyTorch) or the last maximal element of its window."""
    out = np.zeros_like(x)
    for n, c, oh, ow in np.ndindex(*g.shape):
        cells = [(h, w) for h in range(oh * s - p, oh * s - p + k)
                 for w in range(ow * s - p, ow * s - p + k)
                 if 0 <= h < x.shape[2] and 0 <= w < x.shape[3]]
        best = max(x[n, c, h, w] for h, w in cells)
        ties = [cell for cell in cells if x[(n, c) + cell] == best]
        out[(n, c) + ties[-1 if last else 0]] += g[n, c, oh, ow]
    return out


def test_maxpool_ties_go_to_the_first_maximum():
    torch.manual_seed(1)
    x = _ties(4, 3, 7)
    model = TiePool(3, 7, nn.MaxPool2d(3, 2, 1))
    loss_fn = nn.CrossEntropyLoss()
    y = torch.randint(0, 3, (4,))
    want, _ = _eager(model, loss_fn, x, y)
    # The case is sensitive: routing ties to the last maximum would change pos.grad.
    pooled = copy.deepcopy(model)
    out = pooled.pool(x + pooled.pos)
    out.retain_grad()
    loss_fn(pooled.fc(torch.flatten(out, 1)), y).backward()
    g = out.grad.numpy()
    first = _first_or_last_routing(x.numpy(), g, 3, 2, 1, last=False)
    last = _first_or_last_routing(x.numpy(), g, 3, 2, 1, last=True)
    # pos is shared by the batch: its gradient sums the routed gradients.
    first, last = first.sum(0, keepdims=True), last.sum(0, keepdims=True)
    np.testing.assert_allclose(first, want[1].numpy(), rtol=1e-5, atol=1e-7)
    assert np.abs(first - last).max() > 1e-3
    text = export_training_step(model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.1),
                                x, y)
    got = mlir_exec.run(text, "train_step", _arrays(state(model)[0]) + [x.numpy(), y.numpy()])
    _check(got, want)


def _trained_resnet():
    """A ResNet whose running statistics are no longer the initial 0 / 1."""
    torch.manual_seed(0)
    model = ResNet()
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(4, 3, 16, 16) * 2 + 0.5)
    return model.eval()


def test_exported_inference_uses_running_statistics():
    model = _trained_resnet()
    x = torch.randn(4, 3, 16, 16)
    text = export_inference(model, x)
    params, buffers = state(model)
    got = mlir_exec.run(text, "forward", _arrays(params + buffers) + [x.numpy()])
    with torch.no_grad():
        _check(got, [model(x)])
    assert model.bn1.num_batches_tracked.item() == 3  # the export left the model alone


def test_eval_mode_training_step_freezes_statistics():
    # Fine-tuning with frozen BN: eval-mode forward and backward, no buffer updates.
    model = _trained_resnet()
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
    loss_fn = nn.CrossEntropyLoss()
    text = export_training_step(model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
    assert "wsc.buffer_update" not in text
    params, buffers = state(model)
    got = mlir_exec.run(text, "train_step", _arrays(params + buffers) + [x.numpy(), y.numpy()])
    want, _ = _eager(model, loss_fn, x, y)
    _check(got, want)


def test_read_only_and_non_persistent_buffers_numerics():
    torch.manual_seed(0)
    model, loss_fn = MaskedBuffers(), nn.CrossEntropyLoss()
    x, y = torch.randn(5, 4), torch.randint(0, 4, (5,))
    text = export_training_step(model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
    params, buffers = state(model)
    got = mlir_exec.run(text, "train_step", _arrays(params + buffers) + [x.numpy(), y.numpy()])
    want, after = _eager(model, loss_fn, x, y)
    # Buffers: mask, bn.running_mean/var/num_batches_tracked, scale; only BN's are updated.
    _check(got, want + after[1:4])
