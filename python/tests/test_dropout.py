"""Dropout and other random draws (docs/Runtime.md, "Random draws").

The runtime draws every random op's numbers from Philox keyed by (seed,
step, draw, element index in the whole batch). Checked here: the draws'
statistics (keep rate 1 - p, scaling 1 / (1 - p)), that they do not depend
on the number of systems but do on the seed and the step, and parity with
PyTorch eager given the same draws (wsc.replay_draws) for a BERT-style
encoder, stochastic depth and dropout on a sequence-first tensor.
"""

import copy

import pytest
import torch
import torchvision
from torch import nn

import wsc
from parity import check, train_both


def sgd(params):
    return torch.optim.SGD(params, lr=0.05, momentum=0.9)


class Scale(nn.Module):
    """dropout(x * w): with x = 1 the gradient of w counts the kept units."""

    def __init__(self, width, p):
        super().__init__()
        self.w = nn.Parameter(torch.ones(width))
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(x * self.w)


def _summed(out, y):
    return out.sum() + 0 * y.sum()


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_keep_rate_and_scaling(p):
    batch, width = 64, 512
    model = Scale(width, p)
    x, y = torch.ones(batch, width), torch.zeros(batch)
    prog = wsc.compile(model, _summed, torch.optim.SGD(model.parameters(), lr=1.0), x, y,
                       systems=2, stream_dtype="f32", mode="weight_streaming")
    loss = prog.step(x, y)
    # Every unit is 0 or 1 / (1 - p): the loss times (1 - p) counts the kept ones.
    kept = loss * (1 - p)
    assert kept == pytest.approx(round(kept), abs=1e-5 * kept)  # f32 sums, yet integral
    n = batch * width
    sigma = (n * p * (1 - p)) ** 0.5
    assert abs(kept - n * (1 - p)) < 5 * sigma, (kept, n * (1 - p))
    # w's gradient per column: kept units / (1 - p), so w = 1 - k / (1 - p).
    counts = (1 - prog.state_dict()["w"]) * (1 - p)
    torch.testing.assert_close(counts, counts.round(), rtol=0, atol=1e-3)
    assert counts.sum().item() == pytest.approx(kept, abs=1e-1)
    # The draws behind it: the units kept are exactly those with u < 1 - p.
    (u,) = prog.random_draws(0)
    assert u.shape == (batch, width) and 0 <= u.min() and u.max() < 1
    assert (u < 1 - p).sum().item() == round(kept)


def test_draws_depend_on_seed_and_step_not_systems():
    model = Scale(16, 0.5)
    x, y = torch.ones(6, 16), torch.zeros(6)

    def draws(systems, seed, steps=2):
        m = copy.deepcopy(model)
        prog = wsc.compile(m, _summed, torch.optim.SGD(m.parameters(), lr=0.1), x, y,
                           systems=systems, stream_dtype="f32", mode="weight_streaming",
                           seed=seed)
        losses = [prog.step(x, y) for _ in range(steps)]
        return losses, [prog.random_draws(t)[0] for t in range(steps)]

    one, three, other = draws(1, 5), draws(3, 5), draws(1, 6)
    assert one[0] == three[0]  # the same masks: bit-identical losses
    for a, b in zip(one[1], three[1]):
        assert torch.equal(a, b)
    assert not torch.equal(one[1][0], one[1][1])  # a new mask each step
    assert not torch.equal(one[1][0], other[1][0])  # and for another seed
    with pytest.raises(ValueError, match="seed must be an int in"):
        wsc.compile(copy.deepcopy(model), _summed, torch.optim.SGD(model.parameters(), lr=0.1),
                    x, y, seed=-1)


class Encoder(nn.Module):
    """BERT-style: embeddings, two post-norm encoder layers with dropout 0.1
    (attention weights, after attention, in the feed-forward), a pooled head."""

    def __init__(self, vocab=50, d=16, heads=2, seq=8, classes=3, p=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.02)
        self.drop = nn.Dropout(p)
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=32, dropout=p,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(d, classes)

    def forward(self, ids):
        h = self.encoder(self.drop(self.tok(ids) + self.pos))
        return self.head(h.mean(1))


def _tokens(steps, batch, seq=8, vocab=50, classes=3):
    g = torch.Generator().manual_seed(1)
    return [(torch.randint(0, vocab, (batch, seq), generator=g),
             torch.randint(0, classes, (batch,), generator=g)) for _ in range(steps)]


@pytest.mark.parametrize("systems", [1, 2])
def test_bert_style_encoder_with_dropout_matches_pytorch(systems):
    torch.manual_seed(0)
    model = Encoder()
    data = _tokens(3, 4)
    prog, reference, ours, theirs = train_both(model, nn.CrossEntropyLoss(), data,
                                               systems=systems, mode="weight_streaming",
                                               optimizer=sgd)
    # embeddings, then per layer: attention weights, after attention, inside
    # and after the feed-forward
    assert len(prog.random_draws(0)) == 1 + 2 * 4
    check(prog, reference, ours, theirs)


class SeqFirstDropout(nn.Module):
    """Dropout on a (seq, batch, features) tensor: the batch is not dim 0."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        h = self.drop(self.fc(x).transpose(0, 1))  # (seq, batch, 6)
        return self.head(h.transpose(0, 1).mean(1))


class DepthDropped(nn.Module):
    """torchvision's StochasticDepth ('row': one draw per sample) on a residual."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.depth = torchvision.ops.StochasticDepth(0.5, "row")
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        h = x + self.depth(torch.relu(self.conv(x)))
        return self.head(h.mean((2, 3)))


@pytest.mark.parametrize("make, shape", [(SeqFirstDropout, (6, 5, 6)),
                                         (DepthDropped, (6, 3, 4, 4))])
@pytest.mark.parametrize("systems", [1, 3])
def test_draws_of_any_shape_match_pytorch(make, shape, systems):
    torch.manual_seed(0)
    model = make()
    g = torch.Generator().manual_seed(2)
    data = [(torch.randn(*shape, generator=g), torch.randint(0, 2, (6,), generator=g))
            for _ in range(3)]
    prog, reference, ours, theirs = train_both(model, nn.CrossEntropyLoss(), data,
                                               systems=systems, mode="weight_streaming",
                                               optimizer=sgd)
    check(prog, reference, ours, theirs)


def test_replay_checks_its_draws():
    drop = nn.Dropout(0.5)
    with pytest.raises(RuntimeError, match=r"replay: draw #0 has shape \[2\], .* needs \[3\]"):
        with wsc.replay_draws([torch.zeros(2)]):
            drop(torch.ones(3))
    with pytest.raises(RuntimeError, match="replay: 2 draws given, 1 used"):
        with wsc.replay_draws([torch.zeros(3), torch.zeros(3)]):
            drop(torch.ones(3))
