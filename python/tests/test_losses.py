"""The stock PyTorch losses with their options, trained three steps on the
emulator against eager (loss at every step, final weights; f32 streams,
SGD with momentum) on one system and on two and three (batch 8 splits
3, 3, 2 on three).

Class labels ignore some samples in every cross entropy and NLL case: a few
in the first batch, in the second every sample of system 0's shard on two
systems (rows 0-3) and of system 2's on three (rows 6-7). The mean then
divides by the total weight of the labels kept over the whole batch, a sum
the compiler all-reduces across systems (lowering/losses.py).
"""
import pytest
import torch
from torch import nn

import wsc
import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from parity import check, train_both
from wsc.export import UnsupportedOpError

BATCH, FEATURES, CLASSES, STEPS = 8, 4, 5, 3
SYSTEMS = [1, 2, 3]
# Rows whose labels are ignored, per step (see the module docstring).
IGNORED = [[1, 5], [0, 1, 2, 3, 6, 7], []]
CLASS_WEIGHT = torch.tensor([0.5, 1.5, 1.0, 2.0, 0.25])


def mlp():
    return nn.Sequential(nn.Linear(FEATURES, 8), nn.ReLU(), nn.Linear(8, CLASSES))


class Tokens(nn.Module):
    """(N, L, F) -> class scores (N, C, L): a cross entropy per position."""

    def __init__(self):
        super().__init__()
        self.body = mlp()

    def forward(self, x):
        return self.body(x).transpose(1, 2)


class FlatTokens(Tokens):
    """Scores flattened with the sequence, (N * L, C), for labels that come
    flattened too, [N * L] (a token classifier with padding labelled -100)."""

    def forward(self, x):
        return self.body(x).reshape(-1, CLASSES)


class Pixels(nn.Module):
    """(N, F, H, W) -> class scores (N, C, H, W): nll_loss2d without a reshape."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(FEATURES, CLASSES, 1)

    def forward(self, x):
        return self.conv(torch.relu(x))


def class_batches(ignore_index=-100, sample=(FEATURES,), positions=()):
    """STEPS (input, label) pairs: inputs of `sample` shape, labels of
    `positions` shape (per sample)."""
    torch.manual_seed(0)
    data = []
    for rows in IGNORED:
        labels = torch.randint(0, CLASSES, (BATCH,) + positions)
        labels[rows] = ignore_index
        if positions:  # and one position in every other sample
            labels[::2, ..., 0] = ignore_index
        data.append((torch.randn((BATCH,) + sample), labels))
    return data


def float_batches(kind):
    """Targets: in [0, 1] for BCE ("binary"), rows of class probabilities for
    soft-label cross entropy, any real for the other regression losses."""
    torch.manual_seed(0)
    data = []
    for _ in range(STEPS):
        x = torch.randn(BATCH, FEATURES)
        if kind == "probabilities":
            y = torch.softmax(torch.randn(BATCH, CLASSES) * 2, 1)
        elif kind == "binary":
            y = torch.rand(BATCH, CLASSES)
        else:
            y = torch.randn(BATCH, CLASSES) * 1.5
        data.append((x, y))
    return data


def mean_of(loss):
    """reduction="none" leaves the loss per sample: the user reduces it."""
    return lambda out, y: loss(out, y).mean()


def log_softmax_then(loss):
    return lambda out, y: loss(torch.log_softmax(out, 1), y)


def train(model, loss_fn, data, systems):
    torch.manual_seed(1)
    prog, reference, ours, theirs = train_both(model, loss_fn, data, systems)
    check(prog, reference, ours, theirs)
    return prog


CROSS_ENTROPY = {
    "default": (lambda: nn.CrossEntropyLoss(), -100),
    "ignore_a_class": (lambda: nn.CrossEntropyLoss(ignore_index=2), 2),
    "label_smoothing": (lambda: nn.CrossEntropyLoss(label_smoothing=0.1), -100),
    "weight": (lambda: nn.CrossEntropyLoss(weight=CLASS_WEIGHT), -100),
    "weight_smoothing_ignore_a_class": (lambda: nn.CrossEntropyLoss(
        weight=CLASS_WEIGHT, ignore_index=2, label_smoothing=0.2), 2),
    "sum_weight_smoothing": (lambda: nn.CrossEntropyLoss(
        weight=CLASS_WEIGHT, label_smoothing=0.1, reduction="sum"), -100),
    "none_weight_smoothing": (lambda: mean_of(nn.CrossEntropyLoss(
        weight=CLASS_WEIGHT, label_smoothing=0.1, reduction="none")), -100),
    "nll_default": (lambda: log_softmax_then(nn.NLLLoss()), -100),
    "nll_weight_ignore_a_class": (lambda: log_softmax_then(
        nn.NLLLoss(weight=CLASS_WEIGHT, ignore_index=3)), 3),
    "nll_sum": (lambda: log_softmax_then(nn.NLLLoss(reduction="sum")), -100),
    "nll_none_weight": (lambda: log_softmax_then(
        lambda o, y: nn.NLLLoss(weight=CLASS_WEIGHT, reduction="none")(o, y).sum()), -100),
}


@pytest.mark.parametrize("systems", SYSTEMS)
@pytest.mark.parametrize("case", sorted(CROSS_ENTROPY))
def test_cross_entropy_and_nll_options(case, systems):
    make_loss, ignore_index = CROSS_ENTROPY[case]
    prog = train(mlp(), make_loss(), class_batches(ignore_index), systems)
    if systems > 1 and "sum" not in case and "none" not in case:
        # The mean's total weight is summed over the systems' shards.
        assert any(step["op"] == "all_reduce" for step in prog.schedule["steps"])


SEQUENCE = {  # model, input and label shapes per sample
    "tokens": (Tokens, (3, FEATURES), (3,)),
    "pixels": (Pixels, (FEATURES, 3, 2), (3, 2)),
}


@pytest.mark.parametrize("systems", SYSTEMS)
@pytest.mark.parametrize("model", sorted(SEQUENCE))
@pytest.mark.parametrize("loss", ["default", "weight_smoothing_ignore_a_class"])
def test_cross_entropy_per_position(model, loss, systems):
    """(N, C, d1, ...) scores with (N, d1, ...) labels: nll_loss2d."""
    make_model, sample, positions = SEQUENCE[model]
    make_loss, ignore_index = CROSS_ENTROPY[loss]
    train(make_model(), make_loss(), class_batches(ignore_index, sample, positions), systems)


@pytest.mark.parametrize("systems", SYSTEMS)
@pytest.mark.parametrize("loss", ["default", "label_smoothing"])
def test_cross_entropy_on_labels_flattened_with_the_sequence(loss, systems):
    """Padding positions (the last two of every sequence) and whole samples
    ignored; each system gets whole samples of the flattened labels."""
    make_loss, ignore_index = CROSS_ENTROPY[loss]
    data = [(x, y.reshape(-1)) for x, y in class_batches(ignore_index, (4, FEATURES), (4,))]
    for _, y in data:
        y.view(BATCH, 4)[:, 2:] = ignore_index
    train(FlatTokens(), make_loss(), data, systems)


@pytest.mark.parametrize("systems", SYSTEMS)
def test_cross_entropy_with_class_probabilities(systems):
    loss = nn.CrossEntropyLoss(weight=CLASS_WEIGHT, label_smoothing=0.1)
    train(mlp(), loss, float_batches("probabilities"), systems)


REGRESSION = {
    "bce_with_logits": (lambda r: nn.BCEWithLogitsLoss(reduction=r), "binary"),
    "bce_with_logits_weights": (lambda r: nn.BCEWithLogitsLoss(
        weight=CLASS_WEIGHT, pos_weight=torch.tensor([1.0, 3.0, 0.5, 2.0, 1.0]),
        reduction=r), "binary"),
    "mse": (lambda r: nn.MSELoss(reduction=r), "real"),
    "l1": (lambda r: nn.L1Loss(reduction=r), "real"),
    "smooth_l1": (lambda r: nn.SmoothL1Loss(beta=0.5, reduction=r), "real"),
    "smooth_l1_beta_0": (lambda r: nn.SmoothL1Loss(beta=0.0, reduction=r), "real"),
    "huber": (lambda r: nn.HuberLoss(delta=0.5, reduction=r), "real"),
}


@pytest.mark.parametrize("systems", SYSTEMS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", sorted(REGRESSION))
def test_regression_losses(case, reduction, systems):
    make_loss, targets = REGRESSION[case]
    loss = make_loss(reduction)
    train(mlp(), mean_of(loss) if reduction == "none" else loss, float_batches(targets),
          systems)


ALL_IGNORED = {
    "cross_entropy": nn.CrossEntropyLoss(),
    "smoothing_weight": nn.CrossEntropyLoss(weight=CLASS_WEIGHT, label_smoothing=0.1),
    "nll_weight": log_softmax_then(nn.NLLLoss(weight=CLASS_WEIGHT)),
}


@pytest.mark.parametrize("systems", [1, 2])
@pytest.mark.parametrize("case", sorted(ALL_IGNORED))
def test_every_label_ignored_gives_nan_and_no_gradient_like_pytorch(case, systems):
    """PyTorch's mean over no labels is 0 / 0 = nan, and the gradients are
    zero (the weights still decay). wsc matches that with allow_nonfinite
    (by default a nan loss stops the step: test_nonfinite.py)."""
    data = class_batches()
    data[1] = (data[1][0], torch.full((BATCH,), -100))
    torch.manual_seed(1)
    prog, reference, ours, theirs = train_both(
        mlp(), ALL_IGNORED[case], data, systems,
        observe=lambda t, p: setattr(p, "allow_nonfinite", True))
    assert torch.isnan(torch.tensor(theirs[1])) and torch.isnan(torch.tensor(ours[1]))
    torch.testing.assert_close(torch.tensor(ours), torch.tensor(theirs), rtol=1e-4, atol=0,
                               equal_nan=True)
    got = prog.state_dict()
    for name, want in reference.state_dict().items():
        torch.testing.assert_close(got[name], want, rtol=1e-4, atol=1e-5, msg=name)


def compile_mlp(loss_fn, labels):
    model = mlp()
    return wsc.compile(model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.1),
                       torch.randn(BATCH, FEATURES), labels, stream_dtype="f32")


def test_ignore_index_reaches_the_runtime_and_other_labels_still_fail():
    labels = torch.tensor([0, -100, 2, 1, 4, -100, 2, 3])
    prog = compile_mlp(nn.CrossEntropyLoss(), labels)
    assert "wsc.num_classes = 5 : i64, wsc.ignore_index = -100 : i64" in prog.mlir.exported
    prog.step(torch.randn(BATCH, FEATURES), labels)
    labels[3] = 7
    with pytest.raises(Exception, match=r"input 'label0': label 7 at index 3 is out of range "
                                        r"\[0, 5\) and not ignore_index -100"):
        prog.step(torch.randn(BATCH, FEATURES), labels)


def test_an_ignore_index_that_is_a_class_needs_no_runtime_exception():
    labels = torch.tensor([0, 2, 2, 1, 4, 3, 2, 3])
    prog = compile_mlp(nn.CrossEntropyLoss(ignore_index=2), labels)
    assert "wsc.ignore_index" not in prog.mlir.exported
    labels[1] = -100
    with pytest.raises(Exception, match=r"label -100 at index 1 is out of range \[0, 5\)$"):
        prog.step(torch.randn(BATCH, FEATURES), labels)


def test_a_loss_per_sample_must_be_reduced_by_the_loss_function():
    with pytest.raises(ValueError, match=r"loss_fn must return a scalar float32 tensor, got "
                                         r"shape \[8\] torch.float32"):
        compile_mlp(nn.CrossEntropyLoss(reduction="none"), torch.randint(0, CLASSES, (BATCH,)))


def test_a_loss_reading_the_models_own_parameters_is_not_frozen_into_a_constant():
    """Plain tensors the loss reads (class weights) become constants; a
    parameter read outside the model's forward must not silently be one."""
    model = mlp()
    ce = nn.CrossEntropyLoss()

    def regularized(out, y):
        return ce(out, y) + 1e-3 * model[0].weight.pow(2).sum()

    with pytest.raises(UnsupportedOpError):
        wsc.compile(model, regularized, torch.optim.SGD(model.parameters(), lr=0.1),
                    torch.randn(BATCH, FEATURES), torch.randint(0, CLASSES, (BATCH,)),
                    stream_dtype="f32")


class Twin(nn.Module):
    """Two embeddings of each sample, for the pair losses."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(FEATURES, 6), nn.Linear(FEATURES, 6)

    def forward(self, x):
        return self.a(x), self.b(x)


@pytest.mark.parametrize("systems", [1, 2])
def test_cosine_embedding_loss(systems):
    """nn.CosineEmbeddingLoss normalises with an in-place aten.sqrt_, which
    lowers as aten.sqrt (it used to stop the exporter with a raw KeyError)."""
    cosine = nn.CosineEmbeddingLoss(margin=0.1)
    torch.manual_seed(2)
    data = [(torch.randn(BATCH, FEATURES), torch.randint(0, 2, (BATCH,)).float() * 2 - 1)
            for _ in range(STEPS)]
    train(Twin(), lambda out, y: cosine(out[0], out[1], y), data, systems)


class Triplet(nn.Module):
    """Anchor, positive and negative embeddings of each sample."""

    def __init__(self):
        super().__init__()
        self.a, self.p, self.n = (nn.Linear(FEATURES, 6) for _ in range(3))

    def forward(self, x):
        return self.a(x), self.p(x), self.n(x)


PAIR_AND_PROBABILITY = {
    # name -> (model, loss on the model output and the target, target kind)
    "bce": (mlp, lambda: (lambda out, y: nn.BCELoss()(torch.sigmoid(out), y)), "binary"),
    "bce_weight_sum": (mlp, lambda: (lambda out, y: nn.BCELoss(
        weight=CLASS_WEIGHT, reduction="sum")(torch.sigmoid(out), y)), "binary"),
    "kl_div_batchmean": (mlp, lambda: (lambda out, y: nn.KLDivLoss(reduction="batchmean")(
        torch.log_softmax(out, 1), y)), "probabilities"),
    "kl_div_log_target": (mlp, lambda: (lambda out, y: nn.KLDivLoss(
        reduction="sum", log_target=True)(torch.log_softmax(out, 1), torch.log(y))),
        "probabilities"),
    "multilabel_soft_margin": (mlp, lambda: (lambda out, y: nn.MultiLabelSoftMarginLoss(
        weight=CLASS_WEIGHT)(out, (y > 0.5).float())), "binary"),
    "triplet_margin": (Triplet, lambda: (lambda out, y: nn.TripletMarginLoss(margin=0.5)(
        *out) + 0 * y.sum()), "binary"),
    "triplet_margin_p1_swap": (Triplet, lambda: (lambda out, y: nn.TripletMarginLoss(
        margin=1.0, p=1, swap=True)(*out) + 0 * y.sum()), "binary"),
    "margin_ranking": (Twin, lambda: (lambda out, y: nn.MarginRankingLoss(margin=0.2)(
        out[0].sum(1), out[1].sum(1), (y[:, 0] > 0.5).float() * 2 - 1)), "binary"),
}


@pytest.mark.parametrize("systems", [1, 2])
@pytest.mark.parametrize("case", sorted(PAIR_AND_PROBABILITY))
def test_probability_pair_and_triplet_losses(case, systems):
    """BCELoss (binary_cross_entropy), KLDivLoss (xlogy), TripletMarginLoss
    (vector norms), MarginRankingLoss and MultiLabelSoftMarginLoss
    (log_sigmoid) against eager."""
    make_model, make_loss, targets = PAIR_AND_PROBABILITY[case]
    train(make_model(), make_loss(), float_batches(targets), systems)
