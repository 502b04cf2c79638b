"""Layer-pipelined mode: mode choice, placement, floorplan, and training that
matches PyTorch (docs/LayerPipelined.md)."""
import xml.dom.minidom

import pytest
import torch
from torch import nn

import wsc
import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from cnn_models import small_cnn
from parity import check, sgd, train_both
from transformer_models import GPT, LMLoss, token_batches
from wsc import CompileError

STEPS = 10


def mlp():
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(),
                         nn.Linear(32, 10))


def batches(shape, classes, steps=STEPS, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(shape, generator=g), torch.randint(0, classes, (shape[0],), generator=g))
            for _ in range(steps)]


def compile_mlp(**kwargs):
    torch.manual_seed(0)
    model = mlp()
    x, y = batches((8, 16), 10, steps=1)[0]
    return wsc.compile(model, nn.CrossEntropyLoss(), sgd(model.parameters()), x, y, **kwargs)


def test_mlp_trains_like_pytorch():
    torch.manual_seed(0)
    prog, *rest = train_both(mlp(), nn.CrossEntropyLoss(), batches((8, 16), 10),
                             mode="layer_pipelined")
    assert prog.report()["mode"] == "layer_pipelined"
    check(prog, *rest)


@pytest.mark.parametrize("mode", ["layer_pipelined", "weight_streaming"])
def test_cnn_trains_like_pytorch(mode):
    torch.manual_seed(0)
    prog, *rest = train_both(small_cnn(), nn.CrossEntropyLoss(), batches((4, 3, 12, 12), 10),
                             mode=mode)
    check(prog, *rest)
    if mode == "layer_pipelined":
        placement = prog.report()["placement"]
        # conv(H W C K R S T U): the first conv reads its 14x14 padded input.
        assert placement["0"]["kind"] == "conv"
        assert placement["0"]["formal"] == [14, 14, 3, 8, 3, 3, 1, 1]
        assert placement["3"]["formal"] == [6, 6, 8, 8, 3, 3, 2, 2]


def test_small_gpt_trains_like_pytorch():
    torch.manual_seed(0)
    model = GPT(layers=2, seq=16, vocab=64, d=32, heads=2)
    prog, *rest = train_both(model, LMLoss(), token_batches(STEPS, 4, 16, 64),
                             mode="layer_pipelined")
    check(prog, *rest)


def test_auto_runs_a_small_model_layer_pipelined_on_one_system():
    prog = compile_mlp()
    report = prog.report()
    assert report["mode"] == "layer_pipelined", report["mode_reason"]
    assert report["mode_reason"].startswith("mode layer_pipelined (auto)")
    assert report["warnings"] == []
    assert prog.schedule["params"] and all(
        s["op"] not in ("weight_stream", "gradient_stream") for s in prog.schedule["steps"])


def test_auto_streams_weights_on_two_systems():
    prog = compile_mlp(systems=2)
    report = prog.report()
    assert report["mode"] == "weight_streaming"
    assert "2 systems need weight streaming" in report["mode_reason"]
    assert report["placement"] == {}


def test_forcing_layer_pipelined_on_two_systems_is_an_error():
    with pytest.raises(CompileError, match="layer-pipelined mode runs on one system, not 2"):
        compile_mlp(systems=2, mode="layer_pipelined")


def test_every_layer_is_placed_inside_the_wafer_without_overlap():
    prog = compile_mlp(mode="layer_pipelined")
    report = prog.report()
    target = prog.schedule["target"]
    regions = {layer: p["region"] for layer, p in report["placement"].items()}
    assert sorted(regions) == ["0", "2", "4", "loss"]
    cells = set()
    for layer, r in regions.items():
        assert r["x"] >= 0 and r["y"] >= 0, layer
        assert r["x"] + r["width"] <= target["pe_x"] and r["y"] + r["height"] <= target["pe_y"]
        mine = {(x, y) for x in range(r["x"], r["x"] + r["width"])
                for y in range(r["y"], r["y"] + r["height"])}
        assert not cells & mine, f"{layer} overlaps another layer"
        cells |= mine
    assert report["placement_summary"].startswith("placed 4 layers")


def test_peak_sram_is_the_fullest_rectangle_not_a_sum_over_layers():
    """Each PE belongs to one layer's rectangle: the report's peak per PE is
    the largest memory the placer gave a kernel, within PE SRAM, not the sum
    of every layer's values as if they shared PEs."""
    torch.manual_seed(0)
    model = small_cnn()
    x, y = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
    prog = wsc.compile(model, nn.CrossEntropyLoss(), sgd(model.parameters()), x, y,
                       mode="layer_pipelined")
    prog.step(x, y)
    kernels = [s for s in prog.schedule["steps"] if s["op"] == "kernel"]
    fullest = max(4 * k["lp"]["memory_words"] for k in kernels)
    peak = prog.report()["last_step"]["peak_sram_per_pe_bytes"]
    assert peak == fullest
    assert peak <= prog.schedule["target"]["sram_per_pe_bytes"]
    summed = sum(v.get("sram_bytes_per_pe", 0) for v in prog.schedule["values"])
    assert peak < summed


def test_floorplan_draws_every_layer_and_route():
    prog = compile_mlp(mode="layer_pipelined")
    doc = xml.dom.minidom.parseString(prog.floorplan_svg())
    regions = [r for r in doc.getElementsByTagName("rect") if r.getAttribute("class") == "region"]
    # Each region's title: "<number> <layer>: <kind>, <w>x<h> PEs, ...".
    titles = [r.getElementsByTagName("title")[0].firstChild.data.split(":")[0].split(" ", 1)
              for r in regions]
    assert [number for number, _ in titles] == ["1", "2", "3", "4"]
    assert sorted(layer for _, layer in titles) == ["0", "2", "4", "loss"]
    routes = sum(1 for s in prog.schedule["steps"] if s["op"] == "route")
    assert len(doc.getElementsByTagName("polyline")) == routes > 0


def test_weight_streaming_programs_have_no_floorplan():
    with pytest.raises(ValueError, match="layer_pipelined mode only"):
        compile_mlp(mode="weight_streaming").floorplan_svg()


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), "60", True])
def test_time_limit_must_be_a_positive_number(bad):
    with pytest.raises(ValueError, match="time_limit must be a positive number"):
        compile_mlp(time_limit=bad)
