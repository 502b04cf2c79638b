"""Dynamic sparsity (wsc.sparse_schedule) on the emulator against PyTorch:
masks that change between steps, MemoryX's dense gradient requests for
RigL, and streams that follow the masks."""
import pytest
import torch
from torch import nn

import wsc
import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from parity import check, train_both
from test_sparsity import batches, mlp, optimizer
from wsc.sparse_schedule import SET, GradualMagnitudePruning, RigL

SPARSE = ["0.weight", "2.weight", "4.weight"]


def record(steps):
    """An observer that keeps each step's masks and sparse report."""
    def observe(t, prog):
        last = prog.report()["last_step"]
        steps.append({"masks": prog.masks(), "sparse": last.get("sparse")})
    return observe


@pytest.mark.parametrize("kind", ["sgd", "adamw"])
@pytest.mark.parametrize("systems", [1, 2])
def test_rigl_regrows_from_requested_gradients_like_pytorch(kind, systems):
    torch.manual_seed(0)
    rigl = RigL(0.9, end_step=10, update_frequency=3, drop_fraction=0.5)
    steps = []
    prog, *rest = train_both(mlp(), nn.CrossEntropyLoss(), batches(), optimizer=optimizer(kind),
                             mode="weight_streaming", systems=systems, masks=rigl,
                             observe=record(steps))
    check(prog, *rest)
    for name in SPARSE:
        nnz = [int(s["masks"][name].sum()) for s in steps]
        assert len(set(nnz)) == 1, name  # regrowth keeps nnz
        for t, s in enumerate(steps):
            phi = s["masks"][name].numel()
            q = next(p for p in s["sparse"]["params"] if p["name"] == name)
            assert q["nnz"] == nnz[0]
            if rigl.updates_at(t):
                # MemoryX asked for every entry's gradient (a flag: no
                # request bytes), which came back in mask order.
                assert q["gradient_bytes"] == 4 * phi and q["request_bytes"] == 0
            else:
                assert q["gradient_bytes"] == 4 * nnz[0] and q["request_bytes"] == 0
            if t:  # the masks changed exactly when RigL replaced some weights
                changed = not torch.equal(s["masks"][name], steps[t - 1]["masks"][name])
                moved = rigl.updates_at(t) and int(rigl.drop_fraction_at(t) * nnz[0]) > 0
                assert changed == moved, (name, t)
    for s in steps:
        assert s["sparse"]["spmm"] > 0 and s["sparse"]["dense_fallbacks"] == 0
    # Some weights dropped at the first update come back at the second: with
    # optimizer state from before, they pass only because both sides restart
    # that state at zero.
    before, first, second = (steps[t]["masks"] for t in (1, 2, 5))
    assert sum(int((before[n] & ~first[n] & second[n]).sum()) for n in SPARSE) > 0
    state = prog.state_dict()
    for name, mask in prog.masks().items():
        assert torch.all(state[name][~mask] == 0), name


def test_gradual_pruning_shrinks_the_streams_like_pytorch():
    torch.manual_seed(0)
    gmp = GradualMagnitudePruning(0.9, end_step=6, frequency=2)
    steps = []
    prog, *rest = train_both(mlp(), nn.CrossEntropyLoss(), batches(), optimizer=optimizer("sgd"),
                             mode="weight_streaming", masks=gmp, observe=record(steps))
    check(prog, *rest)
    # The compiler planned CSR streams for the final density.
    assert prog.schedule["params"][0]["sparsity"]["density"] == pytest.approx(0.1)
    for name in SPARSE:
        q = [next(p for p in s["sparse"]["params"] if p["name"] == name) for s in steps]
        nnz = [p["nnz"] for p in q]
        assert nnz[0] == steps[0]["masks"][name].numel()  # starts dense
        assert all(a >= b for a, b in zip(nnz, nnz[1:])) and nnz[-1] < nnz[0]
        # Stream bytes follow the shrinking masks (forward and transposed).
        bytes_ = [p["stream_bytes"] for p in q]
        assert all(a >= b for a, b in zip(bytes_, bytes_[1:])), bytes_
        assert bytes_[-1] < 0.3 * bytes_[0]
    final = prog.masks()
    for name in SPARSE:
        assert int(final[name].sum()) == final[name].numel() - round(0.9 * final[name].numel())
    assert prog.report()["sparsity"]["0.weight"] == pytest.approx(0.1, abs=1e-3)


@pytest.mark.parametrize("schedule", ["rigl", "set"])
def test_regrowth_in_layer_pipelined_mode_trains_like_pytorch(schedule):
    torch.manual_seed(0)
    make = RigL if schedule == "rigl" else SET
    prog, *rest = train_both(mlp(), nn.CrossEntropyLoss(), batches(), optimizer=optimizer("sgd"),
                             mode="layer_pipelined",
                             masks=make(0.8, end_step=10, update_frequency=4))
    check(prog, *rest)


def test_a_schedule_starts_once():
    rigl = RigL(0.9, end_step=10)
    model = mlp()
    x, y = batches(1)[0]
    wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1), x, y,
                mode="weight_streaming", sparsity=rigl)
    with pytest.raises(ValueError, match="start\\(\\) was already called"):
        wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                    x, y, mode="weight_streaming", sparsity=rigl)
