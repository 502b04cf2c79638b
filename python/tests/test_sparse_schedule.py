"""Dynamic sparsity schedules (wsc.sparse_schedule) and the PyTorch reference
trainer (parity.train_reference), pure torch: no compiler, no emulator."""
import math

import pytest
import torch
from torch import nn

from parity import train_reference
from wsc.sparse import prune_magnitude
from wsc.sparse_schedule import SET, GradualMagnitudePruning, RigL


def linear(n=10, seed=0):
    torch.manual_seed(seed)
    return nn.Linear(n, n, bias=False)


def state(model, masks):
    """The update() inputs for the current weights of ``model``."""
    weights = {name: p.detach().clone() for name, p in model.named_parameters()
               if name in masks}
    return weights, {name: m.clone() for name, m in masks.items()}


def flat_set(mask):
    return set(mask.flatten().nonzero().flatten().tolist())


def smallest(values, among, k):
    """The k indices of ``among`` with the smallest value (values distinct)."""
    return set(sorted(among, key=lambda i: values[i])[:k])


# --- Gradual magnitude pruning ------------------------------------------------

def test_gmp_sparsity_follows_the_cubic_schedule():
    gmp = GradualMagnitudePruning(0.9, initial_sparsity=0.1, begin_step=10, end_step=20)
    assert gmp.sparsity_at(0) == pytest.approx(0.1)
    assert gmp.sparsity_at(10) == pytest.approx(0.1)
    assert gmp.sparsity_at(12) == pytest.approx(0.9 - 0.8 * 0.512)  # (1 - 2/10)**3
    assert gmp.sparsity_at(15) == pytest.approx(0.8)  # 0.9 - 0.8 * 0.5**3
    assert gmp.sparsity_at(20) == pytest.approx(0.9)
    assert gmp.sparsity_at(30) == pytest.approx(0.9)
    assert gmp.planned_density("anything") == pytest.approx(0.1)
    assert gmp.source == "gmp" and not gmp.needs_gradients


def test_gmp_updates_on_the_frequency_grid_and_at_end_step():
    gmp = GradualMagnitudePruning(0.5, begin_step=10, end_step=21, frequency=4)
    assert [t for t in range(30) if gmp.updates_at(t)] == [10, 14, 18, 21]


def test_gmp_prunes_the_smallest_actives_down_to_the_schedule():
    model = linear()
    gmp = GradualMagnitudePruning(0.9, end_step=10, frequency=2)
    masks = gmp.start(model)
    assert masks.source == "gmp" and masks["weight"].all()
    g = torch.Generator().manual_seed(1)
    seen = []
    for t in range(12):
        with torch.no_grad():  # a training step moves the active weights
            model.weight.add_(0.1 * torch.randn(10, 10, generator=g)).mul_(masks["weight"])
        if not gmp.updates_at(t):
            continue
        weights, old = state(model, masks)
        masks = gmp.update(t, weights, old, None)
        assert masks.source == "gmp"
        s_t = 0.9 - 0.9 * (1 - t / 10) ** 3  # by hand: s_i = 0, begin 0, end 10
        nnz = int(masks["weight"].sum())
        assert nnz == round((1 - s_t) * 100), t
        assert not (masks["weight"] & ~old["weight"]).any()  # only shrinks
        magnitude = weights["weight"].abs().flatten().tolist()
        kept = flat_set(masks["weight"])
        assert kept == set(sorted(flat_set(old["weight"]), key=lambda i: -magnitude[i])[:nnz])
        seen.append(t)
    assert seen == [0, 2, 4, 6, 8, 10]
    assert int(masks["weight"].sum()) == 10  # exactly the final sparsity


def test_gmp_start_prunes_to_initial_sparsity_and_never_reactivates():
    model = linear()
    magnitude = model.weight.detach().abs().flatten().tolist()
    gmp = GradualMagnitudePruning(0.8, initial_sparsity=0.5, begin_step=0, end_step=4)
    masks = gmp.start(model)
    assert flat_set(masks["weight"]) == set(range(100)) - smallest(magnitude, range(100), 50)
    assert torch.all(model.weight[~masks["weight"]] == 0)
    sparser = {"weight": masks["weight"] & (torch.arange(100) < 30).view(10, 10)}
    weights, _ = state(model, masks)
    new = gmp.update(1, weights, sparser, None)  # target 33 nnz > at most 30
    assert torch.equal(new["weight"], sparser["weight"])


def test_gmp_ends_with_prune_magnitudes_nnz_even_on_a_half():
    # numel 5 at 50 %: prune_magnitude prunes round(2.5) = 2 and keeps 3, where
    # round((1 - 0.5) * 5) would keep 2; every schedule counts like prune_magnitude.
    model = nn.Linear(5, 1, bias=False)
    gmp = GradualMagnitudePruning(0.5, end_step=2)
    masks = gmp.start(model)
    weights, masks = state(model, masks)
    final = gmp.update(2, weights, masks, None)
    assert int(final["weight"].sum()) == int(prune_magnitude(model, 0.5)["weight"].sum()) == 3
    assert int(RigL(0.5, end_step=2).start(nn.Linear(5, 1, bias=False))["weight"].sum()) == 3


# --- RigL and SET -------------------------------------------------------------

def test_drop_fraction_decays_on_a_cosine_and_updates_stop_before_end():
    rigl = RigL(0.5, end_step=100, update_frequency=10, drop_fraction=0.3)
    assert rigl.drop_fraction_at(49) == pytest.approx(0.15)
    assert rigl.drop_fraction_at(24) == pytest.approx(0.15 * (1 + math.sqrt(0.5)))
    assert rigl.drop_fraction_at(-1) == pytest.approx(0.3)
    assert rigl.drop_fraction_at(99) == pytest.approx(0.0)
    assert [t for t in range(120) if rigl.updates_at(t)] == [9, 19, 29, 39, 49, 59, 69, 79, 89]
    assert rigl.planned_density("weight") == pytest.approx(0.5)
    assert rigl.source == "rigl" and rigl.needs_gradients
    assert SET(0.5, end_step=10).source == "set" and not SET(0.5, end_step=10).needs_gradients


@pytest.mark.parametrize("cls", [RigL, SET])
def test_random_init_prunes_exactly_and_depends_on_the_seed(cls):
    first = cls(0.73, end_step=10).start(linear())["weight"]
    assert int((~first).sum()) == 73
    assert torch.equal(first, cls(0.73, end_step=10).start(linear())["weight"])
    assert not torch.equal(first, cls(0.73, end_step=10, seed=1).start(linear())["weight"])
    model = linear()
    magnitude = model.weight.detach().abs().flatten().tolist()
    masks = cls(0.73, end_step=10, init="magnitude").start(model)
    assert flat_set(~masks["weight"]) == smallest(magnitude, range(100), 73)


def test_rigl_drops_smallest_weights_and_grows_largest_dense_gradients():
    model = linear()
    rigl = RigL(0.6, end_step=100, update_frequency=10, drop_fraction=0.5)
    masks = rigl.start(model)
    weights, old = state(model, masks)
    gradients = {"weight": torch.randn(10, 10, generator=torch.Generator().manual_seed(2))}
    inputs = [t.clone() for t in (weights["weight"], old["weight"], gradients["weight"])]
    new = rigl.update(29, weights, old, gradients)
    for before, after in zip(inputs, (weights["weight"], old["weight"], gradients["weight"])):
        assert torch.equal(before, after)  # inputs untouched
    k = math.floor(0.25 * (1 + math.cos(math.pi * 0.3)) * 40)
    assert k == 15
    active, inactive = flat_set(old["weight"]), set(range(100)) - flat_set(old["weight"])
    dropped = active - flat_set(new["weight"])
    grown = flat_set(new["weight"]) - active
    assert dropped == smallest(weights["weight"].abs().flatten().tolist(), active, k)
    assert grown == smallest((-gradients["weight"].abs()).flatten().tolist(), inactive, k)
    assert not dropped & grown and int(new["weight"].sum()) == 40 and new.source == "rigl"


def test_set_grows_random_old_inactive_entries_deterministically():
    model = linear()
    masks = SET(0.5, end_step=100, update_frequency=1).start(model)
    weights, old = state(model, masks)
    active = flat_set(old["weight"])
    k = math.floor(0.15 * (1 + math.cos(math.pi * 0.04)) * 50)

    def grown(seed, step):
        schedule = SET(0.5, end_step=100, update_frequency=1, seed=seed)
        schedule.start(linear())
        result = schedule.update(step, weights, old, None)
        assert result.source == "set" and int(result["weight"].sum()) == 50
        dropped = active - flat_set(result["weight"])
        assert dropped == smallest(weights["weight"].abs().flatten().tolist(), active, k)
        return flat_set(result["weight"]) - active

    assert len(grown(0, 3)) == k == 14
    assert grown(0, 3) == grown(0, 3)
    assert grown(0, 3) != grown(1, 3) and grown(0, 3) != grown(0, 4)
    assert all(not grown(seed, 3) & active for seed in range(5))  # old-inactive only


def test_ties_go_to_the_lower_index_and_nan_ranks_last():
    model = linear()
    with torch.no_grad():
        model.weight.fill_(1.0)
    rigl = RigL(0.5, end_step=100, update_frequency=10, drop_fraction=0.1)
    masks = rigl.start(model)
    weights, old = state(model, masks)
    active = sorted(flat_set(old["weight"]))
    inactive = sorted(set(range(100)) - set(active))
    new = rigl.update(9, weights, old, {"weight": torch.ones(10, 10)})["weight"]
    k = math.floor(0.05 * (1 + math.cos(math.pi * 0.1)) * 50)
    assert set(active) - flat_set(new) == set(active[:k])
    assert flat_set(new) - set(active) == set(inactive[:k])
    # A NaN weight is kept and a NaN gradient not grown while numbers remain.
    weights["weight"].view(-1)[active[0]] = float("nan")
    grads = torch.ones(10, 10)
    grads.view(-1)[inactive[0]] = float("nan")
    new = rigl.update(9, weights, old, {"weight": grads})["weight"]
    assert set(active) - flat_set(new) == set(active[1:k + 1])
    assert flat_set(new) - set(active) == set(inactive[1:k + 1])
    dense = {"weight": torch.ones(10, 10, dtype=torch.bool)}
    gmp = GradualMagnitudePruning(0.5, end_step=1)
    gmp.start(model)
    weights = {"weight": torch.ones(10, 10)}
    weights["weight"].view(-1)[0] = float("nan")
    kept = flat_set(gmp.update(1, weights, dense, None)["weight"])
    assert kept == {0} | set(range(51, 100))


class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(12, 8)
        self.norm = nn.LayerNorm(8)
        self.body = nn.Linear(8, 8)
        self.head = nn.Linear(8, 12)

    def forward(self, x):
        return self.head(torch.relu(self.body(self.norm(self.embed(x)))))


@pytest.mark.parametrize("make", [lambda: GradualMagnitudePruning(0.5, initial_sparsity=0.5,
                                                                  end_step=10),
                                  lambda: RigL(0.5, end_step=10), lambda: SET(0.5, end_step=10)])
def test_default_filter_leaves_biases_norms_embeddings_and_heads_dense(make):
    torch.manual_seed(0)
    model = Tower()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    masks = make().start(model)
    assert list(masks) == ["body.weight"] and int(masks["body.weight"].sum()) == 32
    for name, value in model.state_dict().items():
        if name != "body.weight":
            assert torch.equal(value, before[name]), name
    assert torch.all(model.body.weight[~masks["body.weight"]] == 0)
    only_head = make().__class__(0.5, end_step=10, param_filter=lambda n, p, m: n == "head.weight")
    assert list(only_head.start(Tower())) == ["head.weight"]


# --- Argument validation ------------------------------------------------------

@pytest.mark.parametrize("make, error, word", [
    (lambda: GradualMagnitudePruning(True, end_step=10), TypeError, "final_sparsity"),
    (lambda: GradualMagnitudePruning("0.5", end_step=10), TypeError, "final_sparsity"),
    (lambda: GradualMagnitudePruning(1.0, end_step=10), ValueError, "final_sparsity"),
    (lambda: GradualMagnitudePruning(-0.1, end_step=10), ValueError, "final_sparsity"),
    (lambda: GradualMagnitudePruning(float("nan"), end_step=10), ValueError, "final_sparsity"),
    (lambda: GradualMagnitudePruning(0.5, end_step=10, initial_sparsity=1), ValueError,
     "initial_sparsity"),
    (lambda: GradualMagnitudePruning(0.5, end_step=10, initial_sparsity=0.6), ValueError,
     "initial_sparsity"),
    (lambda: GradualMagnitudePruning(0.5, end_step=0), ValueError, "end_step"),
    (lambda: GradualMagnitudePruning(0.5, end_step=2.0), TypeError, "end_step"),
    (lambda: GradualMagnitudePruning(0.5, end_step=True), TypeError, "end_step"),
    (lambda: GradualMagnitudePruning(0.5, end_step=10, begin_step=-1), ValueError, "begin_step"),
    (lambda: GradualMagnitudePruning(0.5, end_step=10, begin_step=10), ValueError, "begin_step"),
    (lambda: GradualMagnitudePruning(0.5, end_step=10, frequency=0), ValueError, "frequency"),
    (lambda: GradualMagnitudePruning(0.5, end_step=10, frequency=False), TypeError, "frequency"),
    (lambda: GradualMagnitudePruning(0.5, end_step=10, param_filter=3), TypeError,
     "param_filter"),
    (lambda: RigL(1, end_step=10), ValueError, "sparsity"),
    (lambda: RigL(False, end_step=10), TypeError, "sparsity"),
    (lambda: RigL(0.5, end_step=-3), ValueError, "end_step"),
    (lambda: SET(0.5, end_step=10, update_frequency=0), ValueError, "update_frequency"),
    (lambda: SET(0.5, end_step=10, update_frequency=1.5), TypeError, "update_frequency"),
    (lambda: RigL(0.5, end_step=10, drop_fraction=0), ValueError, "drop_fraction"),
    (lambda: RigL(0.5, end_step=10, drop_fraction=1.5), ValueError, "drop_fraction"),
    (lambda: RigL(0.5, end_step=10, drop_fraction=True), TypeError, "drop_fraction"),
    (lambda: SET(0.5, end_step=10, init="zeros"), ValueError, "init"),
    (lambda: SET(0.5, end_step=10, seed=-1), ValueError, "seed"),
    (lambda: SET(0.5, end_step=10, seed=1.0), TypeError, "seed"),
])
def test_bad_arguments_name_the_argument(make, error, word):
    with pytest.raises(error, match=word):
        make()


def test_bad_calls_name_the_argument():
    model = linear()
    rigl = RigL(0.5, end_step=100, update_frequency=10)
    weights, masks = state(model, {"weight": torch.ones(10, 10, dtype=torch.bool)})
    grads = {"weight": torch.ones(10, 10)}
    with pytest.raises(ValueError, match="start"):
        rigl.update(9, weights, masks, grads)
    masks = rigl.start(model)
    weights, masks = state(model, masks)
    with pytest.raises(ValueError, match="start"):
        rigl.start(model)
    with pytest.raises(ValueError, match="gradients"):
        rigl.update(9, weights, masks, None)
    with pytest.raises(ValueError, match="step"):
        rigl.update(10, weights, masks, grads)
    with pytest.raises(TypeError, match="step"):
        rigl.update(True, weights, masks, grads)
    with pytest.raises(ValueError, match="weights"):
        rigl.update(9, {"other": weights["weight"]}, masks, grads)
    with pytest.raises(ValueError, match="masks"):
        rigl.update(9, weights, {"weight": masks["weight"][:5]}, grads)
    with pytest.raises(TypeError, match="masks"):
        rigl.update(9, weights, {"weight": masks["weight"].float()}, grads)
    with pytest.raises(ValueError, match="gradients"):
        rigl.update(9, weights, masks, {"weight": torch.ones(100)})
    with pytest.raises(TypeError, match="gradients"):
        rigl.update(9, weights, masks, [grads["weight"]])
    with pytest.raises(ValueError, match="name"):
        rigl.planned_density("bias")


# --- The reference trainer ----------------------------------------------------

class Recorder:
    """Wraps a schedule, remembering its latest masks, so a forward pre-hook
    can check the weights the next step starts from."""

    def __init__(self, schedule, masks):
        self.schedule, self.masks, self.grown, self.history = schedule, masks, {}, [masks]
        self.needs_gradients = schedule.needs_gradients
        self.updates_at = schedule.updates_at

    def update(self, step, weights, masks, gradients):
        if gradients is not None:  # dense: nonzero where the weight is inactive too
            assert all(g[~masks[n]].ne(0).any() for n, g in gradients.items())
        new = self.schedule.update(step, weights, masks, gradients)
        self.grown = {name: m & ~masks[name] for name, m in new.items()}
        self.masks = new
        self.history.append(new)
        return new


def test_reference_trainer_with_rigl_moves_masks_keeping_nnz_and_zeros():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
    rigl = RigL(0.8, end_step=12, update_frequency=2, drop_fraction=0.5)
    recorder = Recorder(rigl, rigl.start(model))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    params = dict(model.named_parameters())
    checked = []

    def check(module, inputs):
        for name, mask in recorder.masks.items():
            assert torch.all(params[name][~mask] == 0), name
            buffer = optimizer.state.get(params[name], {}).get("momentum_buffer")
            if buffer is not None and name in recorder.grown:
                assert torch.all(buffer[recorder.grown[name]] == 0), name
        recorder.grown = {}
        checked.append(True)

    model.register_forward_pre_hook(check)
    g = torch.Generator().manual_seed(0)
    batches = [(torch.randn(16, 8, generator=g), torch.randint(0, 4, (16,), generator=g))
               for _ in range(12)]
    losses, masks = train_reference(model, nn.CrossEntropyLoss(), optimizer, batches,
                                    recorder, recorder.masks)
    check(model, None)
    assert len(losses) == 12 and all(math.isfinite(v) for v in losses) and len(checked) == 13
    assert len(recorder.history) == 1 + 5  # updates after steps 1, 3, 5, 7, 9
    assert masks is recorder.history[-1]
    for name in ["0.weight", "2.weight"]:
        counts = {int(m[name].sum()) for m in recorder.history}
        assert counts == {round(0.2 * params[name].numel())}, name
        assert not torch.equal(recorder.history[0][name], masks[name]), name


def test_reference_trainer_with_fixed_masks_and_with_gmp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    gmp = GradualMagnitudePruning(0.75, end_step=6, frequency=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    batches = [(torch.randn(4, 8), torch.randint(0, 4, (4,))) for _ in range(8)]
    losses, masks = train_reference(model, nn.CrossEntropyLoss(), optimizer, batches,
                                    gmp, gmp.start(model))
    assert len(losses) == 8 and int(masks["0.weight"].sum()) == 32
    assert torch.count_nonzero(model[0].weight) <= 32
    fixed = {name: m.clone() for name, m in masks.items()}
    _, same = train_reference(model, nn.CrossEntropyLoss(), optimizer, batches, None, fixed)
    assert same is fixed and torch.all(model[2].weight[~fixed["2.weight"]] == 0)
