"""End to end: wsc.compile + Program.step against PyTorch eager training."""
import copy

import pytest
import torch
from torch import nn

import wsc
import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
import parity


def mlp(sizes, act=nn.ReLU):
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i + 2 < len(sizes):
            layers.append(act())
    return nn.Sequential(*layers)


def make_optimizer(kind, params):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-3)
    if kind == "nesterov":
        return torch.optim.SGD(params, lr=0.05, momentum=0.8, nesterov=True)
    if kind == "adam":
        return torch.optim.Adam(params, lr=1e-2, betas=(0.8, 0.95), weight_decay=1e-3)
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=1e-2, weight_decay=0.1, amsgrad=True)
    raise ValueError(kind)


def batches(n, batch, features, classes, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(batch, features, generator=g),
             torch.randint(0, classes, (batch,), generator=g)) for _ in range(n)]


def train_both(sizes, kind, systems, stream_dtype="f32", steps=5, batch=12, loss_fn=None,
               act=nn.ReLU):
    """An MLP of `sizes` on random batches, on the emulator and in PyTorch."""
    torch.manual_seed(0)
    return parity.train_both(mlp(sizes, act), loss_fn or nn.CrossEntropyLoss(),
                             batches(steps, batch, sizes[0], sizes[-1]), systems,
                             optimizer=lambda params: make_optimizer(kind, params),
                             stream_dtype=stream_dtype)


@pytest.mark.parametrize("kind", ["sgd", "nesterov", "adam", "adamw"])
@pytest.mark.parametrize("systems", [1, 4])
def test_matches_pytorch_f32(kind, systems):
    parity.check(*train_both([16, 32, 24, 10], kind, systems, batch=16))


def test_odd_sizes_on_three_systems():
    parity.check(*train_both([37, 53, 29, 5], "sgd", 3, batch=12, act=nn.Tanh))


def test_uneven_shards_and_mse():
    # 10 samples on 3 systems: shards of 4, 3, 3; MSE with float targets.
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(6, 8), nn.Sigmoid(), nn.Linear(8, 3))
    reference = copy.deepcopy(model)
    x, y = torch.randn(10, 6), torch.randn(10, 3)
    prog = wsc.compile(model, nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                       x, y, systems=3, stream_dtype="f32")
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    for _ in range(4):
        ours = prog.step(x, y)
        ref_opt.zero_grad()
        loss = nn.MSELoss()(reference(x), y)
        loss.backward()
        ref_opt.step()
        assert ours == pytest.approx(loss.item(), rel=1e-4)


def test_f16_streaming_tracks_pytorch_within_two_percent():
    _, _, ours, theirs = train_both([32, 64, 64, 10], "sgd", 2, stream_dtype="f16", steps=10,
                                    batch=32, act=nn.GELU)
    for a, b in zip(ours, theirs):
        assert abs(a - b) <= 0.02 * abs(b)


def test_report_explains_mode_layouts_and_time():
    prog, *_ = train_both([8, 16, 4], "sgd", 2, steps=1, batch=8)
    report = prog.report()
    assert report["mode"] == "weight_streaming"
    assert "layer-pipelined footprint" in report["mode_reason"]
    assert "2 systems need weight streaming" in report["mode_reason"]
    assert report["warnings"] == []
    assert report["systems"] == 2
    # The layer's output features over x (named h1 by the cost model).
    layout = report["layouts"]["0.fwd"]["layout"]
    assert layout["dims"][-1] == "h1" and layout["x"] == ["h1"], layout
    assert layout["tiling"] in ("exact", "pad", "uneven")
    last = report["last_step"]
    assert last["time_s"] > 0 and last["bytes_in"] > 0 and last["bytes_out"] > 0
    assert "wsc.kernel" in prog.mlir.compiled and "linalg.matmul" in prog.mlir.exported


@pytest.mark.parametrize("kwargs, message", [
    (dict(mode=3), "mode must be a one-word string"),
    (dict(mode="auto systems=2"), "mode must be a one-word string"),
    (dict(systems=0), "systems must be a positive int"),
    (dict(systems=2.0), "systems must be a positive int"),
    (dict(systems=64), "smaller than systems"),
    (dict(grid=[8, 8]), "grid must be a \\(width, height\\) tuple"),
    (dict(grid=(8, True)), "grid must be a \\(width, height\\) tuple"),
])
def test_bad_arguments(kwargs, message):
    model = mlp([4, 3])
    with pytest.raises(ValueError, match=message):
        wsc.compile(model, nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                    torch.randn(8, 4), torch.randn(8, 3), **kwargs)


# wsc-opt owns the choices and bounds: its message names the option and the
# quoted value (the pipeline string that wsc.compile shows quotes neither).
@pytest.mark.parametrize("kwargs, message", [
    (dict(mode="fast"), "mode.*'fast'"),
    (dict(stream_dtype="f8"), "stream-dtype.*'f8'"),
    (dict(target="cs9"), "target.*'cs9'"),
    (dict(grid=(0, 4)), "grid.*'0x4'"),
    (dict(grid=(8, 70000)), "grid.*'8x70000'"),
])
def test_options_wsc_opt_rejects_fail_before_the_export(monkeypatch, kwargs, message):
    def no_export(*args, **kwargs):
        raise AssertionError("exported before checking the options")

    monkeypatch.setattr("wsc.export.export_training_step", no_export)
    model = mlp([4, 3])
    with pytest.raises(wsc.CompileError, match=message):
        wsc.compile(model, nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                    torch.randn(8, 4), torch.randn(8, 3), **kwargs)


def test_grid_scales_the_wafer_down():
    model = mlp([16, 32, 10])
    x, y = torch.randn(8, 16), torch.randint(0, 10, (8,))
    prog = wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                       x, y, mode="layer_pipelined", grid=(24, 12))
    assert (prog.schedule["target"]["pe_x"], prog.schedule["target"]["pe_y"]) == (24, 12)
    placement = prog.report()["placement"]
    assert placement
    for placed in placement.values():
        region = placed["region"]
        assert region["x"] + region["width"] <= 24 and region["y"] + region["height"] <= 12


def test_step_rejects_wrong_shapes_and_labels():
    model = mlp([4, 3])
    prog = wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                       torch.randn(8, 4), torch.randint(0, 3, (8,)))
    with pytest.raises(ValueError, match="expected shape"):
        prog.step(torch.randn(7, 4), torch.randint(0, 3, (8,)))
    with pytest.raises(TypeError, match="expected i64"):
        prog.step(torch.randn(8, 4), torch.randn(8))
    with pytest.raises(ValueError, match="label"):
        prog.step(torch.randn(8, 4), torch.full((8,), 7))


class BatchCentred(nn.Module):
    """Subtracts the batch mean: a batch statistic, like BatchNorm's."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        return h - h.mean(0, keepdim=True)


def test_batch_statistics_on_several_systems_match_one_device():
    """Each system centres by the whole batch's mean (all-reduced), not its own."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    data = [(torch.randn(8, 4, generator=g), torch.randn(8, 3, generator=g)) for _ in range(5)]
    prog, reference, ours, theirs = parity.train_both(BatchCentred(), nn.MSELoss(), data,
                                                      systems=2)
    parity.check(prog, reference, ours, theirs)
    assert any(step["op"] == "all_reduce" for step in prog.schedule["steps"])


@pytest.mark.parametrize("mode", ["weight_streaming", "layer_pipelined"])
def test_batch_statistics_on_one_system_match_pytorch(mode):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    data = [(torch.randn(8, 4, generator=g), torch.randn(8, 3, generator=g)) for _ in range(5)]
    parity.check(*parity.train_both(BatchCentred(), nn.MSELoss(), data, mode=mode))
