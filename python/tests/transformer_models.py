"""GPT- and BERT-style models written with ordinary torch.nn modules."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class HandAttention(nn.Module):
    """Multi-head attention written out: fused qkv, scores, mask, softmax."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x, masked):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        shape = (b, t, self.heads, d // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        scores = scores.masked_fill(masked, float("-inf"))
        y = (F.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(y)


class TorchAttention(nn.Module):
    """nn.MultiheadAttention with a causal mask or a key padding mask."""

    def __init__(self, d, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)

    def forward(self, x, masked):
        if masked.dim() == 2 and masked.shape[0] == masked.shape[1] == x.shape[1]:
            y, _ = self.attn(x, x, x, attn_mask=masked, need_weights=False)
        else:  # (B, 1, 1, T) padding mask -> key_padding_mask (B, T)
            y, _ = self.attn(x, x, x, key_padding_mask=masked[:, 0, 0, :], need_weights=False)
        return y


class Block(nn.Module):
    def __init__(self, d, heads, attention):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = attention(d, heads)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, masked):
        x = x + self.attn(self.ln1(x), masked)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    """Decoder: token + position embeddings, causal blocks, LM head."""

    def __init__(self, vocab=512, d=128, heads=4, seq=64, layers=2, tied=True,
                 attention=HandAttention):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads, attention) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        if tied:
            self.head.weight = self.tok.weight

    def forward(self, ids):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t))
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        for block in self.blocks:
            x = block(x, causal)
        return self.head(self.ln(x))


class LMLoss(nn.Module):
    """Next-token cross entropy over every position."""

    def forward(self, logits, targets):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


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
