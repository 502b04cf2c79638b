"""Activation recomputation (issue #42, docs/MicroBatching.md "Memory plan"):
a weight-streaming step that computes some forward kernels again just before
the backward kernels that read them trains bit for bit as the step that
keeps their results. Dropout inside a recomputed kernel reads the same
draws, and BatchNorm's running statistics move once per forward pass: a
recomputed kernel makes only what its backward readers read."""
import pytest
import torch
from torch import nn
from torch.nn import functional as F

import wsc
import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from cnn_models import ResNet

STEPS = 3


class DropoutGPT(nn.Module):
    """A pre-norm causal decoder with dropout on embeddings, attention and MLP
    (torch.nn.TransformerEncoderLayer under a causal mask)."""

    def __init__(self, vocab=64, d=32, heads=2, seq=8, layers=2, p=0.1):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.drop = nn.Dropout(p)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=p, batch_first=True,
                                       norm_first=True) for _ in range(layers))
        self.head = nn.Linear(d, vocab)
        self.register_buffer("causal", torch.triu(torch.full((seq, seq), float("-inf")), 1))

    def forward(self, ids):
        x = self.drop(self.tok(ids) + self.pos(torch.arange(ids.shape[1])))
        for block in self.blocks:
            x = block(x, src_mask=self.causal)
        return self.head(x)


class TokenLoss(nn.Module):
    def forward(self, logits, labels):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


def gpt_case(batch):
    torch.manual_seed(0)
    data = [(torch.randint(0, 64, (batch, 8)), torch.randint(0, 64, (batch, 8)))
            for _ in range(STEPS)]
    return DropoutGPT(), TokenLoss(), data


def resnet_case(batch):
    torch.manual_seed(0)
    data = [(torch.randn(batch, 3, 16, 16), torch.randint(0, 10, (batch,)))
            for _ in range(STEPS)]
    return ResNet(), nn.CrossEntropyLoss(), data


def train(case, batch, systems, grid, recompute, allow_sram_overflow=False):
    model, loss_fn, data = case(batch)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    prog = wsc.compile(model, loss_fn, optimizer, data[0][0], data[0][1], systems=systems,
                       stream_dtype="f32", mode="weight_streaming", grid=grid,
                       recompute=recompute, seed=3, allow_sram_overflow=allow_sram_overflow,
                       micro_batch_size="none")
    losses = [prog.step(x, y) for x, y in data]
    return prog, losses, prog.state_dict()


# (case, recompute, grid, batch per system): full recomputes whatever fits;
# selective only what the step needs, so its cases are on wafers where
# keeping every activation does not fit. The stored step they are compared
# with then overflows PE SRAM, which changes the modeled mapping only.
CASES = [pytest.param(case, recompute, grid, batch, systems, id=f"{name}-{systems}")
         for name, case, recompute, grid, batch, systems in [
             ("gpt-dropout-full", gpt_case, "full", None, 4, 1),
             ("gpt-dropout-full", gpt_case, "full", None, 8, 2),
             ("gpt-dropout-selective", gpt_case, "selective", (2, 2), 4, 1),
             ("gpt-dropout-selective", gpt_case, "selective", (2, 2), 8, 2),
             ("resnet-batchnorm-full", resnet_case, "full", None, 4, 1),
             ("resnet-batchnorm-full", resnet_case, "full", None, 8, 2),
             ("resnet-batchnorm-selective", resnet_case, "selective", (2, 2), 5, 1),
             ("resnet-batchnorm-selective", resnet_case, "selective", (3, 2), 12, 2)]]


@pytest.mark.parametrize("case,recompute,grid,batch,systems", CASES)
def test_recomputed_step_trains_bitwise_as_stored(case, recompute, grid, batch, systems):
    prog, losses, state = train(case, batch, systems, grid, recompute)
    recomputed = [s for s in prog.schedule["steps"]
                  if str(s.get("name", "")).endswith(".recompute")]
    assert recomputed, prog.report()["memory_plan"]
    assert prog.report()["memory_plan"].startswith(f"memory plan {recompute} "), \
        prog.report()["memory_plan"]
    # The report per kernel names each recomputation and its compute.
    by_kernel = prog.report()["memory_by_kernel"]
    assert {e["recomputed_by"] for e in by_kernel.values() if "recomputed_by" in e} == \
        {s["name"] for s in recomputed}
    assert all(e["recompute_s"] > 0 for e in by_kernel.values() if "recomputed_by" in e)
    _, stored_losses, stored_state = train(case, batch, systems, grid, "none",
                                           allow_sram_overflow=recompute == "selective")
    assert losses == stored_losses
    assert state.keys() == stored_state.keys()
    for name, value in state.items():
        assert torch.equal(value, stored_state[name]), name


def test_recomputed_kernel_shares_its_backward_kernels_stream():
    """A weight a recomputed kernel and the backward kernel after it both
    read row-major (the norms' scale and shift) streams in once and waits on
    the wafer in between; the emulator counts it in the step's peak."""
    prog, _, _ = train(gpt_case, 4, 1, None, "full")
    sched = prog.schedule
    streams = {s["result"]: s["param"] for s in sched["steps"] if s["op"] == "weight_stream"}
    readers = {}
    for s in sched["steps"]:
        if s["op"] == "kernel":
            for v in s["operands"]:
                if v in streams:
                    readers.setdefault(v, []).append(s)
    shared = {v: r for v, r in readers.items() if len(r) > 1}
    assert shared, "no weight stream is shared"
    for v, kernels in shared.items():
        names = [k["name"] for k in kernels]
        assert names[0].endswith(".recompute") and kernels[-1]["phase"] == "backward", names
        assert sched["values"][v].get("sram_bytes_per_pe", 0) > 0, (streams[v], names)
    # Once per pass: the forward pass's stream of a shared weight is another.
    for v in shared:
        assert sum(1 for s in sched["steps"]
                   if s["op"] == "weight_stream" and s["param"] == streams[v]) == 2, streams[v]
    peak = prog.report()["last_step"]["peak_sram_per_pe_bytes"]
    assert 0 < peak <= sched["target"]["sram_per_pe_bytes"]


def test_recompute_is_checked():
    model, loss_fn, data = gpt_case(2)
    with pytest.raises(ValueError, match="recompute must be a one-word string"):
        wsc.compile(model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.1), data[0][0],
                    data[0][1], recompute="some things")
    with pytest.raises(wsc.CompileError, match="recompute"):
        wsc.compile(model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.1), data[0][0],
                    data[0][1], recompute="most")


class CheckpointedMLP(nn.Module):
    """Blocks run under torch.utils.checkpoint as their authors write it:
    reentrant (1.13's default), non-reentrant, or checkpoint_sequential."""

    def __init__(self, how, d=32, blocks=4):
        super().__init__()
        self.how = how
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            for _ in range(blocks))
        self.head = nn.Linear(d, 5)

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint, checkpoint_sequential
        if self.how == "sequential":
            x = checkpoint_sequential(nn.Sequential(*self.blocks), 2, x)
        else:
            for block in self.blocks:
                x = x + checkpoint(block, x, use_reentrant=self.how == "reentrant")
        return self.head(x)


@pytest.mark.parametrize("systems", [1, 2])
@pytest.mark.parametrize("how", ["reentrant", "non-reentrant", "sequential"])
def test_torch_checkpoint_trains_as_pytorchs_checkpointed_training(how, systems):
    """A model that checkpoints with torch.utils.checkpoint exports (the
    segment's forward once) and matches PyTorch's own checkpointed training,
    which recomputes each segment in its backward pass."""
    from parity import check, train_both
    torch.manual_seed(0)
    data = [(torch.randn(8, 32, requires_grad=True), torch.randint(0, 5, (8,)))
            for _ in range(STEPS)]
    prog, reference, ours, theirs = train_both(CheckpointedMLP(how), nn.CrossEntropyLoss(),
                                               data, systems, mode="weight_streaming",
                                               recompute="full")
    assert any(str(s.get("name", "")).endswith(".recompute") for s in prog.schedule["steps"])
    check(prog, reference, ours, theirs)
