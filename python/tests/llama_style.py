"""A LLaMA-style decoder written the way single-file model repositories
write one: RMSNorm, rotary position tables precomputed into non-persistent
buffers (``freqs_cos``, ``freqs_sin``: not in ``state_dict()``), grouped
key/value heads repeated to the query heads, a SwiGLU feed-forward and a
causal mask buffer of -inf above the diagonal."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary_tables(head_dim, seq, theta=10000.0):
    inv = 1.0 / theta ** (torch.arange(0, head_dim, 2).float() / head_dim)
    angles = torch.outer(torch.arange(seq).float(), inv)
    return torch.cos(angles), torch.sin(angles)


def rotate(x, cos, sin):
    """Rotates pairs (even, odd) of the last dim of (B, T, H, D) by the tables (T, D/2)."""
    even, odd = x[..., 0::2], x[..., 1::2]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), -1).flatten(3)


class Attention(nn.Module):
    def __init__(self, dim, heads, kv_heads, seq):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.wq = nn.Linear(dim, heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(heads * self.head_dim, dim, bias=False)
        mask = torch.full((1, 1, seq, seq), float("-inf")).triu(1)
        self.register_buffer("mask", mask)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.heads, self.head_dim)
        k = self.wk(x).view(b, t, self.kv_heads, self.head_dim)
        v = self.wv(x).view(b, t, self.kv_heads, self.head_dim)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        repeat = self.heads // self.kv_heads
        k = k[:, :, :, None, :].expand(b, t, self.kv_heads, repeat, self.head_dim).reshape(
            b, t, self.heads, self.head_dim)
        v = v[:, :, :, None, :].expand(b, t, self.kv_heads, repeat, self.head_dim).reshape(
            b, t, self.heads, self.head_dim)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        scores = q @ k.transpose(2, 3) / math.sqrt(self.head_dim) + self.mask[:, :, :t, :t]
        out = F.softmax(scores.float(), dim=-1).type_as(q) @ v
        return self.wo(out.transpose(1, 2).contiguous().view(b, t, -1))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, dim, heads, kv_heads, seq):
        super().__init__()
        self.attention_norm, self.ffn_norm = RMSNorm(dim), RMSNorm(dim)
        self.attention = Attention(dim, heads, kv_heads, seq)
        self.feed_forward = FeedForward(dim, 2 * dim)

    def forward(self, x, cos, sin):
        h = x + self.attention(self.attention_norm(x), cos, sin)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, vocab=40, dim=32, layers=2, heads=4, kv_heads=2, seq=16):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Block(dim, heads, kv_heads, seq) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        self.tok_embeddings.weight = self.output.weight  # tied
        cos, sin = rotary_tables(dim // heads, seq)
        self.register_buffer("freqs_cos", cos, persistent=False)
        self.register_buffer("freqs_sin", sin, persistent=False)

    def forward(self, tokens):
        t = tokens.shape[1]
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, self.freqs_cos[:t], self.freqs_sin[:t])
        return self.output(self.norm(h))
