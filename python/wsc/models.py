"""Reference models, buildable on the meta device for shapes-only compiles.

``GPT(GPTConfig.gpt3("175b"), device="meta")`` has every parameter's shape
and no storage: wsc.export traces it on fake tensors, so GPT-3-sized graphs
compile on a laptop.
"""
import dataclasses
import math

import torch
import torch.nn.functional as F
from torch import nn


# GPT-3 paper (Brown et al. 2020), Table 2.1: size -> (d_model, heads, layers);
# vocab 50257, context 2048. The paper lists XL with 24 heads of 128, which
# does not tile d_model = 2048; 16 x 128 does.
GPT3_SHAPES = {
    "xl": (2048, 16, 24),
    "6.7b": (4096, 32, 32),
    "13b": (5120, 40, 40),
    "175b": (12288, 96, 96),
}


@dataclasses.dataclass(frozen=True)
class GPTConfig:
    vocab: int = 512
    d: int = 128
    heads: int = 4
    seq: int = 64
    layers: int = 2
    tied: bool = True

    @classmethod
    def gpt3(cls, size: str) -> "GPTConfig":
        """A GPT-3 model by size: "xl", "6.7b", "13b" or "175b"."""
        if size not in GPT3_SHAPES:
            raise ValueError(f"unknown GPT-3 size {size!r}; expected one of {list(GPT3_SHAPES)}")
        d, heads, layers = GPT3_SHAPES[size]
        return cls(vocab=50257, d=d, heads=heads, seq=2048, layers=layers)

    def params(self) -> int:
        """Parameter count: embeddings, 12 d^2 + 13 d per block, final norm."""
        blocks = self.layers * (12 * self.d * self.d + 13 * self.d)
        head = 0 if self.tied else self.vocab * self.d
        return (self.vocab + self.seq) * self.d + blocks + 2 * self.d + head


class HandAttention(nn.Module):
    """Multi-head attention written out: fused qkv, scores, mask, softmax."""

    def __init__(self, d, heads, device=None):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d, device=device)
        self.proj = nn.Linear(d, d, device=device)

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
    """nn.MultiheadAttention with a causal mask or a (B, 1, 1, T) padding mask."""

    def __init__(self, d, heads, device=None):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True, device=device)

    def forward(self, x, masked):
        if masked.dim() == 2:
            y, _ = self.attn(x, x, x, attn_mask=masked, need_weights=False)
        else:
            y, _ = self.attn(x, x, x, key_padding_mask=masked[:, 0, 0, :], need_weights=False)
        return y


class Block(nn.Module):
    """Pre-norm transformer block: attention and a GELU MLP, with residuals."""

    def __init__(self, d, heads, attention=HandAttention, device=None):
        super().__init__()
        self.ln1 = nn.LayerNorm(d, device=device)
        self.ln2 = nn.LayerNorm(d, device=device)
        self.attn = attention(d, heads, device=device)
        self.fc = nn.Linear(d, 4 * d, device=device)
        self.out = nn.Linear(4 * d, d, device=device)

    def forward(self, x, masked):
        x = x + self.attn(self.ln1(x), masked)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    """Decoder: token + position embeddings, causal blocks, LM head."""

    def __init__(self, config: GPTConfig = GPTConfig(), attention=HandAttention, device=None):
        super().__init__()
        c = config
        self.tok = nn.Embedding(c.vocab, c.d, device=device)
        self.pos = nn.Embedding(c.seq, c.d, device=device)
        self.blocks = nn.ModuleList(Block(c.d, c.heads, attention, device)
                                    for _ in range(c.layers))
        self.ln = nn.LayerNorm(c.d, device=device)
        self.head = nn.Linear(c.d, c.vocab, bias=False, device=device)
        if c.tied:
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
