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


def test_gpt_with_a_fixed_mask_trains_like_pytorch():
    torch.manual_seed(0)
    model = GPT(layers=2, seq=16, vocab=64, d=32, heads=2)
    masks = wsc.sparse.prune_magnitude(model, 0.9)
    # The default filter leaves embeddings (and so the tied head), norms and
    # 1-D parameters dense.
    assert masks and not any("tok" in n or "pos" in n or "ln" in n for n in masks)
    assert all(model.state_dict()[n].dim() == 2 for n in masks)
    train_masked(model, masks, LMLoss(), token_batches(STEPS, 4, 16, 64), optimizer("sgd"),
                 mode="layer_pipelined")


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
