"""BatchNorm training on the emulator against PyTorch eager, on one system and
on several (synchronized batch statistics: docs/Runtime.md, "Buffers and
batch statistics"), and layer pipelined on one wafer. Losses, final weights AND buffers (running statistics,
num_batches_tracked) must match a single device trained on the whole batch."""

import pytest
import torch
from torch import nn

import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from cnn_models import ResNet
from parity import check, sgd, train_both, train_float64

STEPS = 10


def image_batches(steps, batch=4, size=16, classes=10):
    return [(torch.randn(batch, 3, size, size), torch.randint(0, classes, (batch,)))
            for _ in range(steps)]


def all_reduces(prog):
    return sum(step["op"] == "all_reduce" for step in prog.schedule["steps"])


@pytest.mark.parametrize("systems", [1, 2, 3])
def test_resnet_trains_like_pytorch(systems):
    """Four residual blocks, ten BatchNorms; three systems shard the batch of
    four unevenly (2, 1, 1), which the statistics must not notice."""
    torch.manual_seed(0)
    prog, reference, ours, theirs = train_both(ResNet(), nn.CrossEntropyLoss(),
                                               image_batches(STEPS), systems,
                                               mode="weight_streaming")
    check(prog, reference, ours, theirs)
    assert (all_reduces(prog) > 0) == (systems > 1)
    assert int(prog.state_dict()["bn1.num_batches_tracked"]) == STEPS


def test_resnet_trains_layer_pipelined_like_pytorch():
    """On one wafer the buffers are resident like the weights: read in place,
    replaced in place after the step; nothing streams or all-reduces."""
    torch.manual_seed(0)
    prog, reference, ours, theirs = train_both(ResNet(), nn.CrossEntropyLoss(),
                                               image_batches(3), 1, mode="layer_pipelined")
    assert prog.schedule["mode"] == "layer_pipelined"
    check(prog, reference, ours, theirs)
    assert int(prog.state_dict()["bn1.num_batches_tracked"]) == 3
    ops = {step["op"] for step in prog.schedule["steps"]}
    assert "buffer_update" in ops and not ops & {"all_reduce", "weight_stream"}


def test_batchnorm1d_on_the_inputs_trains_like_pytorch():
    """Statistics of the raw inputs (no producer kernel) on two systems, without
    affine parameters.

    Compared with PyTorch in float64: normalising inputs scaled by 3 and
    shifted by 1 amplifies float32 rounding over ten steps, and eager float32
    itself ends 2.5e-5 from the float64 weights (the emulator 3.5e-6), more
    than the tolerance allows either of them."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.BatchNorm1d(5, momentum=0.3, affine=False), nn.Linear(5, 7),
                          nn.ReLU(), nn.BatchNorm1d(7), nn.Linear(7, 3))
    data = [(torch.randn(6, 5) * 3 + 1, torch.randint(0, 3, (6,))) for _ in range(STEPS)]
    exact, theirs = train_float64(model, nn.CrossEntropyLoss(), sgd, data)
    prog, _, ours, _ = train_both(model, nn.CrossEntropyLoss(), data, 2, mode="weight_streaming")
    torch.testing.assert_close(torch.tensor(ours, dtype=torch.float64),
                               torch.tensor(theirs, dtype=torch.float64), rtol=1e-4, atol=0)
    got = prog.state_dict()
    for name, want in exact.state_dict().items():
        torch.testing.assert_close(got[name].to(want.dtype), want, rtol=1e-4, atol=1e-5,
                                   msg=name)


def test_eval_mode_batchnorm_needs_no_synchronization():
    """In eval mode BatchNorm uses its running statistics: nothing sums over
    the batch, nothing is all-reduced, and the buffers do not change. (The
    one all-reduce is the cross entropy's: its mean divides by the count of
    labels kept over the whole batch.)"""
    torch.manual_seed(0)
    model = ResNet().eval()
    prog, reference, ours, theirs = train_both(model, nn.CrossEntropyLoss(), image_batches(3),
                                               2, mode="weight_streaming")
    check(prog, reference, ours, theirs)
    assert all_reduces(prog) == 1
    assert not any(step["op"] == "buffer_update" for step in prog.schedule["steps"])


def test_step_report_counts_the_all_reduces():
    """Each all-reduce goes up every system's out link and back down its in
    link: the bytes show on both sides of the report."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 7), nn.BatchNorm1d(7), nn.Linear(7, 3))
    data = [(torch.randn(6, 5), torch.randint(0, 3, (6,)))]
    # The whole batch at once on both (auto would split it on one system).
    one, _, _, _ = train_both(model, nn.CrossEntropyLoss(), data, 1, mode="weight_streaming",
                              micro_batch_size="none")
    two, _, _, _ = train_both(model, nn.CrossEntropyLoss(), data, 2, mode="weight_streaming",
                              micro_batch_size="none")
    reduced = sum(s["bytes"] for s in two.schedule["steps"] if s["op"] == "all_reduce")
    assert reduced > 0
    r1, r2 = one.report()["last_step"], two.report()["last_step"]
    assert r2["bytes_in"] == pytest.approx(r1["bytes_in"] + reduced)
    assert r2["bytes_out"] == pytest.approx(r1["bytes_out"] + reduced)
