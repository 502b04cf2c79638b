"""Sequence-first models (PyTorch's default batch_first=False) against eager.

The models are written the way pytorch/examples' word_language_model writes
them: tokens (seq, batch), an nn.TransformerEncoder with a causal float mask
and a (max_len, 1, d) positional table, or an LSTM whose hidden state
(layers, batch, hidden) is an input; the decoder's output is flattened to
(seq * batch, vocab), so the batch ends up the inner factor of a merged dim.
"""
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import wsc
from parity import check, sgd, train_both

SEQ, BATCH, VOCAB, D = 12, 4, 40, 16


class PositionalEncoding(nn.Module):
    def __init__(self, d, max_len=64):
        super().__init__()
        position = torch.arange(max_len, dtype=torch.float).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2).float() * (-math.log(10000.0) / d))
        pe = torch.zeros(max_len, d)
        pe[:, 0::2] = torch.sin(position * div)
        pe[:, 1::2] = torch.cos(position * div)
        self.register_buffer("pe", pe.unsqueeze(1))  # (max_len, 1, d): seq-first

    def forward(self, x):
        return x + self.pe[:x.size(0)]


class TransformerLM(nn.Module):
    def __init__(self, layers=2, heads=2, dropout=0.0):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.pos = PositionalEncoding(D)
        layer = nn.TransformerEncoderLayer(D, heads, 2 * D, dropout=dropout)  # batch_first=False
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.decoder = nn.Linear(D, VOCAB)

    def forward(self, src):
        mask = torch.log(torch.tril(torch.ones(len(src), len(src))))
        x = self.pos(self.emb(src) * math.sqrt(D))
        return F.log_softmax(self.decoder(self.encoder(x, mask=mask)), dim=-1)


class RNNLM(nn.Module):
    def __init__(self, kind="LSTM", layers=2):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.rnn = getattr(nn, kind)(D, D, layers)  # batch_first=False
        self.decoder = nn.Linear(D, VOCAB)

    def forward(self, tokens, h0, c0):  # word_language_model's hidden, as two inputs
        output, _ = self.rnn(self.emb(tokens), (h0, c0))
        return F.log_softmax(self.decoder(output).view(-1, VOCAB), dim=1)


def lm_loss(log_probs, targets):  # targets as (seq, batch), flattened like the output
    return F.nll_loss(log_probs.reshape(-1, VOCAB), targets.reshape(-1))


def token_stream(steps, seed=0):
    """(seq, batch) windows and their next tokens, as word_language_model's get_batch."""
    g = torch.Generator().manual_seed(seed)
    data = torch.randint(0, VOCAB, (steps * SEQ + 1, BATCH), generator=g)
    return [(data[i * SEQ:(i + 1) * SEQ], data[i * SEQ + 1:(i + 1) * SEQ + 1])
            for i in range(steps)]


@pytest.mark.parametrize("systems", [1, 2])
def test_sequence_first_transformer_lm_trains_like_pytorch(systems):
    torch.manual_seed(0)
    model = TransformerLM()
    check(*train_both(model, lm_loss, token_stream(4), systems, mode="weight_streaming",
                      batch_dim=1))


def test_layer_pipelined_sequence_first_transformer_lm_trains_like_pytorch():
    torch.manual_seed(1)
    check(*train_both(TransformerLM(layers=1), lm_loss, token_stream(3), 1,
                      mode="layer_pipelined", batch_dim=1))


@pytest.mark.parametrize("systems", [1, 2])
def test_sequence_first_lstm_lm_with_a_hidden_input_infers_its_batch_dims(systems):
    torch.manual_seed(2)
    model = RNNLM()
    hidden = (torch.zeros(2, BATCH, D), torch.zeros(2, BATCH, D))

    data = [((x, *hidden), y) for x, y in token_stream(3, seed=1)]
    # (seq, batch) tokens, (layers, batch, hidden) states, (seq, batch) targets:
    # dim 0 sizes differ, dim 1 is the one size all share.
    prog, reference, ours, theirs = train_both(
        model, lambda out, y: lm_loss(out, y), data, systems, mode="weight_streaming")
    assert prog._batch_dims == (1, 1, 1, 1)
    check(prog, reference, ours, theirs)


def test_program_checks_shapes_in_the_users_layout():
    torch.manual_seed(0)
    model = TransformerLM(layers=1)
    (x, y), = token_stream(1)
    prog = wsc.compile(model, lm_loss, sgd(model.parameters()), x, y, batch_dim=1,
                       mode="weight_streaming", stream_dtype="f32")
    with pytest.raises(ValueError, match=r"expected shape \[12, 4\], got \[4, 12\]"):
        prog.step(x.t().contiguous(), y)


def test_without_batch_dim_a_sequence_first_model_is_refused_with_a_hint():
    torch.manual_seed(0)
    model = TransformerLM(layers=1)
    (x, y), = token_stream(1)  # (seq, batch) both: dim 0 looks like a batch
    with pytest.raises(wsc.CompileError, match="batch_dim="):
        wsc.compile(model, lm_loss, sgd(model.parameters()), x, y, mode="weight_streaming")


@pytest.mark.parametrize("batch_dim,error,message", [
    (2, ValueError, r"batch_dim 2 is out of range for example_inputs\[0\] of shape \[12, 4\]"),
    ((1,), ValueError, "batch_dim has 1 entries for 2 example inputs and targets"),
    ("1", TypeError, "batch_dim must be None, an int or a tuple of ints"),
    ((1, 1), ValueError, r"example_targets\[0\] has 5 entries in its batch dim 1, but the "
                         "batch is 4"),
])
def test_bad_batch_dim_is_named(batch_dim, error, message):
    model = TransformerLM(layers=1)
    x, y = token_stream(1)[0][0], torch.zeros(SEQ, 5, dtype=torch.long)
    with pytest.raises(error, match=message):
        wsc.compile(model, lm_loss, sgd(model.parameters()), x, y, batch_dim=batch_dim)
