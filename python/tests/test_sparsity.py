"""Fixed-mask unstructured sparsity (wsc.sparse) against PyTorch training of
the dense model with masked weights and masked gradients."""
import pytest
import torch
from torch import nn
from torch.nn.utils import prune

import wsc
import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from parity import check, train_both
from transformer_models import GPT, LMLoss, token_batches

STEPS = 10


def mlp():
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 10))


def optimizer(kind):
    if kind == "sgd":
        return lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=1e-3)
    return lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1)


def train_masked(model, masks, loss_fn, data, make_opt, **kwargs):
    """The emulator with `masks` against PyTorch with masked gradients."""
    prog, *rest = train_both(model, loss_fn, data, optimizer=make_opt, masks=masks, **kwargs)
    check(prog, *rest)
    return prog


def batches(steps=STEPS):
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(16, 32, generator=g), torch.randint(0, 10, (16,), generator=g))
            for _ in range(steps)]


@pytest.mark.parametrize("kind", ["sgd", "adamw"])
@pytest.mark.parametrize("mode, systems", [("layer_pipelined", 1), ("weight_streaming", 2)])
def test_mlp_with_a_fixed_90_percent_mask_trains_like_pytorch(kind, mode, systems):
    torch.manual_seed(0)
    model = mlp()
    masks = wsc.sparse.prune_magnitude(model, 0.9)
    assert sorted(masks) == ["0.weight", "2.weight", "4.weight"]
    prog = train_masked(model, masks, nn.CrossEntropyLoss(), batches(), optimizer(kind),
                        mode=mode, systems=systems)
    state = prog.state_dict()
    for name, mask in masks.items():
        assert torch.all(state[name][~mask] == 0), name
        assert torch.count_nonzero(state[name][mask]) > 0, name
    assert prog.report()["sparsity"]["0.weight"] == pytest.approx(0.1, abs=1e-3)
    if mode == "weight_streaming":
        # The weights streamed as CSR and the emulator ran them sparse.
        sparse = prog.report()["last_step"]["sparse"]
        assert sparse["spmm"] > 0 and sparse["sddmm"] > 0 and sparse["dense_fallbacks"] == 0
        first = next(p for p in sparse["params"] if p["name"] == "0.weight")
        assert first["nnz"] == int(masks["0.weight"].sum())
        assert first["gradient_bytes"] == 4 * first["nnz"]


@pytest.mark.parametrize("mode", ["layer_pipelined", "weight_streaming"])
def test_gpt_with_a_fixed_mask_trains_like_pytorch(mode):
    torch.manual_seed(0)
    model = GPT(layers=2, seq=16, vocab=64, d=32, heads=2)
    masks = wsc.sparse.prune_magnitude(model, 0.9)
    # The default filter leaves embeddings (and so the tied head), norms and
    # 1-D parameters dense.
    assert masks and not any("tok" in n or "pos" in n or "ln" in n for n in masks)
    assert all(model.state_dict()[n].dim() == 2 for n in masks)
    prog = train_masked(model, masks, LMLoss(), token_batches(STEPS, 4, 16, 64),
                        optimizer("sgd"), mode=mode)
    if mode == "weight_streaming":
        assert prog.report()["last_step"]["sparse"]["spmm"] > 0


def test_masks_from_torch_prune():
    torch.manual_seed(0)
    model = mlp()
    prune.l1_unstructured(model[0], "weight", amount=0.75)
    prune.random_unstructured(model[2], "weight", amount=0.5)
    masks = wsc.sparse.from_torch_prune(model)
    assert sorted(masks) == ["0.weight", "2.weight"]
    assert not any(n.endswith("_orig") for n, _ in model.named_parameters())
    assert torch.all(model[0].weight[~masks["0.weight"]] == 0)
    train_masked(model, masks, nn.CrossEntropyLoss(), batches(3), optimizer("sgd"))


def test_masks_reach_the_ir_and_the_schedule():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
    masks = wsc.sparse.prune_magnitude(model, 0.9)
    masks["0.bias"] = torch.rand(128) < 0.5  # not 2-D: masked, streamed dense
    x, y = torch.randn(8, 128), torch.randint(0, 10, (8,))
    prog = wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                       x, y, mode="weight_streaming", sparsity=masks)
    density = 1638 / 128 ** 2  # round(0.9 * 128 * 128) pruned
    assert f'wsc.sparsity = {{density = {density!r} : f64, source = "magnitude"}}' \
        in prog.mlir.exported
    params = {p["name"]: p for p in prog.schedule["params"]}
    assert params["0.weight"]["sparsity"] == {"density": density, "source": "magnitude"}
    assert "sparsity" not in params["0.bias"]
    streams = {(s["param"], s["order"]): s for s in prog.schedule["steps"]
               if s["op"] == "weight_stream"}
    assert streams[("0.weight", "row_major")]["format"] == "csr"
    assert streams[("2.weight", "transposed")]["format"] == "csr"
    assert streams[("0.bias", "row_major")]["format"] == "dense"
    # 1638 entries of 2 + 2 bytes and 128 row counts, against 2 * 128 * 128.
    assert streams[("0.weight", "row_major")]["bytes"] == 1638 * 4 + 128 * 4
    grads = {s["param"]: s for s in prog.schedule["steps"] if s["op"] == "gradient_stream"}
    assert grads["0.weight"]["format"] == "mask" and grads["0.weight"]["bytes"] == 4 * 1638
    assert grads["0.bias"]["format"] == "dense"


def test_explicit_masks_are_described_as_explicit():
    model = mlp()
    described = wsc.sparse.describe(model, {"0.weight": torch.ones(64, 32, dtype=torch.bool)})
    assert described == {"0.weight": {"density": 1.0, "source": "explicit"}}


def test_default_filter_can_be_overridden():
    torch.manual_seed(0)
    model = mlp()
    masks = wsc.sparse.prune_magnitude(model, 0.5, param_filter=lambda n, p, m: n == "2.bias")
    assert list(masks) == ["2.bias"] and int(masks["2.bias"].sum()) == 32


@pytest.mark.parametrize("masks, error, message", [
    ({"nope": torch.ones(2, dtype=torch.bool)}, ValueError, "'nope' is not a parameter"),
    ({"0.weight": torch.ones(64, 32)}, TypeError, "must be a bool tensor"),
    ({"0.weight": torch.ones(32, 64, dtype=torch.bool)}, ValueError, "has shape \\[32, 64\\]"),
    ([("0.weight", None)], TypeError, "must be a dict"),
])
def test_bad_masks_are_rejected(masks, error, message):
    model = mlp()
    x, y = batches(1)[0]
    with pytest.raises(error, match=message):
        wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                    x, y, sparsity=masks)


@pytest.mark.parametrize("bad", [1.0, -0.1, "0.9", True])
def test_sparsity_must_be_in_0_1(bad):
    with pytest.raises(ValueError, match="sparsity must be a number in \\[0, 1\\)"):
        wsc.sparse.prune_magnitude(mlp(), bad)
