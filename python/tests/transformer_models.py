"""GPT- and BERT-style models written with ordinary torch.nn modules."""
import torch
from torch import nn

from wsc import models
from wsc.models import Block, HandAttention, LMLoss, TorchAttention  # noqa: F401


def GPT(vocab=512, d=128, heads=4, seq=64, layers=2, tied=True, attention=HandAttention):
    return models.GPT(models.GPTConfig(vocab, d, heads, seq, layers, tied), attention)


class BERT(nn.Module):
    """Encoder over padded batches; classifies from the first token."""

    def __init__(self, vocab=512, d=128, heads=4, seq=64, layers=2, classes=3,
                 attention=HandAttention):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.ln0 = nn.LayerNorm(d)
        self.blocks = nn.ModuleList(Block(d, heads, attention) for _ in range(layers))
        self.cls = nn.Linear(d, classes)

    def forward(self, ids, valid):
        t = ids.shape[1]
        x = self.ln0(self.tok(ids) + self.pos(torch.arange(t)))
        padding = torch.logical_not(valid)[:, None, None, :]  # (B, 1, 1, T)
        for block in self.blocks:
            x = block(x, padding)
        return self.cls(torch.tanh(x[:, 0]))


def token_batches(steps, batch, seq, vocab, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randint(0, vocab, (batch, seq), generator=g),
             torch.randint(0, vocab, (batch, seq), generator=g)) for _ in range(steps)]


def padded_batches(steps, batch, seq, vocab, classes, seed=0):
    """Ids, a validity mask with lengths from seq down to a few tokens, labels."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        lengths = torch.randint(1, seq + 1, (batch,), generator=g)
        lengths[0] = seq
        valid = torch.arange(seq)[None, :] < lengths[:, None]
        ids = torch.randint(0, vocab, (batch, seq), generator=g) * valid
        out.append(((ids, valid), torch.randint(0, classes, (batch,), generator=g)))
    return out
