"""Padded transformer models marked for variable tensor shape (wsc.nn)."""
import torch
import torch.nn.functional as F
from torch import nn

import wsc
from wsc.models import GPT, Block, GPTConfig


class Encoder(nn.Module):
    """BERT-style: strips the token ids, attends under the padding mask and
    classifies from the first token."""

    def __init__(self, vocab=64, d=32, heads=2, seq=16, layers=2, classes=3):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.ln0 = nn.LayerNorm(d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.cls = nn.Linear(d, classes)

    def features(self, ids, valid):
        ids = wsc.nn.strip_padding(ids, valid)
        x = self.ln0(self.tok(ids) + self.pos(torch.arange(ids.shape[1])))
        padding = torch.logical_not(valid)[:, None, None, :]
        for block in self.blocks:
            x = block(x, padding)
        return x

    def forward(self, ids, valid):
        return self.cls(torch.tanh(self.features(ids, valid)[:, 0]))


class MaskedLM(Encoder):
    """BERT pretraining-style: the encoder with a per-token LM head, so every
    layer's work follows the valid tokens (use with MaskedLMLoss)."""

    def __init__(self, vocab=64, d=32, heads=2, seq=16, layers=2):
        super().__init__(vocab, d, heads, seq, layers, classes=vocab)

    def forward(self, ids, valid):
        return wsc.nn.restore_padding(self.cls(self.features(ids, valid)), valid)


class Decoder(GPT):
    """GPT-style on right-padded batches: causal attention never sees the
    padding that follows a sample, and the loss masks it."""

    def __init__(self, vocab=64, d=32, heads=2, seq=16, layers=2):
        super().__init__(GPTConfig(vocab, d, heads, seq, layers))

    def forward(self, ids, valid):
        ids = wsc.nn.strip_padding(ids, valid)
        return wsc.nn.restore_padding(super().forward(ids), valid)


class MaskedLMLoss(nn.Module):
    """Next-token cross entropy over valid positions, normalised by the
    padded token count (a constant, so shards and samples sum exactly)."""

    def forward(self, logits, targets, weights):
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                             reduction="none")
        return (ce * weights.reshape(-1)).sum() / weights.numel()


def right_padded(lengths, seq, vocab, generator):
    """Ids (pad id 0 after each sample's length) and the bool validity mask."""
    lengths = torch.as_tensor(lengths)
    valid = torch.arange(seq)[None, :] < lengths[:, None]
    ids = torch.randint(1, vocab, (len(lengths), seq), generator=generator) * valid
    return ids, valid


def encoder_batches(steps, lengths, seq=16, vocab=64, classes=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        ids, valid = right_padded(lengths, seq, vocab, g)
        out.append(((ids, valid), (torch.randint(0, classes, (len(lengths),), generator=g),)))
    return out


def decoder_batches(steps, lengths, seq=16, vocab=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        ids, valid = right_padded(lengths, seq, vocab, g)
        targets = torch.randint(0, vocab, ids.shape, generator=g) * valid
        out.append(((ids, valid), (targets, valid.float())))
    return out


class PaddedGPT(GPT):
    """GPT on right-padded batches as a user writes it: strip the padding
    after the embeddings and never restore it; the stock loss
    (`ignore_index_loss`) skips the labels at -100. With `attention_mask`
    the blocks also mask the padded keys, as models fed an attention_mask do
    (the causal mask already hides them from the valid queries)."""

    def __init__(self, attention_mask=False, vocab=64, d=32, heads=2, seq=16, layers=2):
        super().__init__(GPTConfig(vocab, d, heads, seq, layers))
        self.attention_mask = attention_mask

    def forward(self, ids, valid):
        t = ids.shape[1]
        x = wsc.nn.strip_padding(self.tok(ids) + self.pos(torch.arange(t)), valid)
        masked = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        if self.attention_mask:
            masked = masked | torch.logical_not(valid)[:, None, None, :]
        for block in self.blocks:
            x = block(x, masked)
        return self.head(self.ln(x))


def ignore_index_loss(logits, labels):
    """PyTorch's mean over the kept labels: a whole-batch count divides it."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                           ignore_index=-100)


def labelled_batches(steps, lengths, seq=16, vocab=64, seed=0):
    """Right-padded ids and mask, and next-token labels at -100 where padded."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        ids, valid = right_padded(lengths, seq, vocab, g)
        labels = torch.randint(0, vocab, ids.shape, generator=g).masked_fill(~valid, -100)
        out.append(((ids, valid), (labels,)))
    return out
