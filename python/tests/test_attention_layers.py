"""torch.nn's own attention layers train like PyTorch on one and several
systems: nn.MultiheadAttention with kdim/vdim and a key padding mask,
nn.TransformerEncoder and nn.TransformerDecoder (self- and cross-attention).

With several systems, the gradient of a packed in_proj_bias is assembled
from the q, k and v bias gradients, each a per-system partial sum over the
batch; wsc-sync-batch-statistics keeps the assembly partial (SwarmX sums
it), rather than all-reducing it (test/Transforms/sync-batch-statistics.mlir).

SGD, not Adam: the key bias's true gradient is exactly zero (softmax is
shift-invariant), and Adam would turn both sides' rounding noise into
lr-sized steps that no two implementations share.
"""

import pytest
import torch
from torch import nn

from parity import check, train_both


def sgd(params):
    return torch.optim.SGD(params, lr=0.05, momentum=0.9)


class CrossAttention(nn.Module):
    """Queries from x attend over a memory with other widths (kdim, vdim),
    padded keys masked out."""

    def __init__(self):
        super().__init__()
        self.q = nn.Linear(4, 8)
        self.attention = nn.MultiheadAttention(8, 2, kdim=6, vdim=5, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x, memory, padded):
        out, _ = self.attention(self.q(x), memory, memory[..., :5], key_padding_mask=padded)
        return self.head(out.mean(1))


def _cross_data(steps, batch=6):
    g = torch.Generator().manual_seed(0)
    data = []
    for _ in range(steps):
        lengths = torch.randint(2, 8, (batch,), generator=g)
        padded = torch.arange(7)[None, :] >= lengths[:, None]
        data.append(((torch.randn(batch, 3, 4, generator=g), torch.randn(batch, 7, 6, generator=g),
                      padded), torch.randint(0, 3, (batch,), generator=g)))
    return data


CONFIGURATIONS = [(1, "weight_streaming"), (2, "weight_streaming"), (1, "layer_pipelined")]


@pytest.mark.parametrize("systems, mode", CONFIGURATIONS + [(3, "weight_streaming")])
def test_multihead_attention_kdim_vdim_key_padding(systems, mode):
    torch.manual_seed(0)
    prog, reference, ours, theirs = train_both(CrossAttention(), nn.CrossEntropyLoss(),
                                               _cross_data(3), systems=systems,
                                               mode=mode, optimizer=sgd)
    check(prog, reference, ours, theirs)


class Seq2Seq(nn.Module):
    """nn.TransformerEncoder over the source, nn.TransformerDecoder (causal
    self-attention, cross-attention to the encoder) over the target."""

    def __init__(self, vocab=16, d=16, heads=2, tgt=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(d, heads, 32, dropout=0.0, batch_first=True), 1,
            enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(
            nn.TransformerDecoderLayer(d, heads, 32, dropout=0.0, batch_first=True), 2)
        self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(tgt))
        self.out = nn.Linear(d, vocab)

    def forward(self, src, tgt):
        memory = self.encoder(self.embed(src))
        h = self.decoder(self.embed(tgt), memory, tgt_mask=self.causal)
        return self.out(h).flatten(0, 1)


@pytest.mark.parametrize("systems, mode", CONFIGURATIONS)
def test_transformer_encoder_decoder(systems, mode):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    data = [((torch.randint(0, 16, (4, 6), generator=g), torch.randint(0, 16, (4, 5), generator=g)),
             torch.randint(0, 16, (20,), generator=g)) for _ in range(3)]
    prog, reference, ours, theirs = train_both(Seq2Seq(), nn.CrossEntropyLoss(), data,
                                               systems=systems, mode=mode, optimizer=sgd)
    check(prog, reference, ours, theirs)
