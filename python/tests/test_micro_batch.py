"""Micro-batching (issue #18 part 3, docs/Runtime.md "Micro-batching"): each
system runs its shard of the batch as micro-batches, MemoryX accumulates their
gradients and the optimizer runs once per step. Parity with PyTorch's gradient
accumulation loop (the same micro-batches, each mean loss scaled by its
micro-batch's share of the batch, one optimizer step), and, for models without
batch statistics, with full-batch training.

Most losses here divide by the global batch's count as a constant (`sum / B`),
so micro-batched training also equals full-batch training. The last tests use
sums over the batch as totals (the stock cross entropy's count of kept labels,
BatchNorm's statistics): each micro-batch then has its own, as in PyTorch's
accumulation loop."""
import copy
import json

import pytest
import torch
from torch import nn
from torch.nn import functional as F

import wsc
import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from cnn_models import ResNet
from parity import sgd
from transformer_models import BERT, GPT, padded_batches, token_batches

STEPS = 3


class SumMSE(nn.Module):
    """MSE summed and divided by the global batch's element count."""

    def __init__(self, batch):
        super().__init__()
        self.batch = batch

    def forward(self, out, target):
        return F.mse_loss(out, target, reduction="sum") / (self.batch * out[0].numel())


class SumCrossEntropy(nn.Module):
    """Cross entropy (over every position) summed, divided by the global count."""

    def __init__(self, batch):
        super().__init__()
        self.batch = batch

    def forward(self, logits, labels):
        flat = logits.reshape(-1, logits.shape[-1])
        rows = flat.shape[0] // logits.shape[0] * self.batch
        return F.cross_entropy(flat, labels.reshape(-1), reduction="sum") / rows


def micro_batches(batch, systems, size):
    """Micro-batch k of the step: sample indices of every system's k-th one."""
    base, extra = divmod(batch, systems)
    shards, begin = [], 0
    for k in range(systems):
        n = base + (k < extra)
        shards.append(range(begin, begin + n))
        begin += n
    count = -(-len(shards[0]) // size)
    return [[i for shard in shards for i in list(shard)[k * size:(k + 1) * size]]
            for k in range(count)]


def select(tensors, index):
    index = torch.tensor(index)
    if isinstance(tensors, tuple):
        return tuple(t[index] for t in tensors)
    return tensors[index]


def accumulation_loop(model, loss_fn, data, systems, size):
    """PyTorch's gradient accumulation over the emulator's micro-batches."""
    optimizer = sgd(model.parameters())
    losses = []
    for x, y in data:
        batch = (x[0] if isinstance(x, tuple) else x).shape[0]
        optimizer.zero_grad()
        total = 0.0
        for index in micro_batches(batch, systems, size):
            xs = select(x, index)
            out = model(*(xs if isinstance(xs, tuple) else (xs,)))
            loss = loss_fn(out, select(y, index)) * (len(index) / batch)
            loss.backward()
            total += float(loss)
        optimizer.step()
        losses.append(total)
    return losses


def train(model, loss_fn, data, systems, size):
    prog = wsc.compile(model, loss_fn, sgd(model.parameters()), data[0][0], data[0][1],
                       systems=systems, stream_dtype="f32", mode="weight_streaming",
                       micro_batch_size=size)
    return prog, [prog.step(x, y) for x, y in data]


def check_parity(model, emulator_loss, torch_loss, data, systems, size, full_batch=True):
    reference = copy.deepcopy(model)
    prog, ours = train(model, emulator_loss, data, systems, size)
    assert prog.schedule["micro_batch_size"] == size
    theirs = accumulation_loop(reference, torch_loss, data, systems, size)
    torch.testing.assert_close(torch.tensor(ours), torch.tensor(theirs), rtol=1e-4, atol=0)
    got = prog.state_dict()
    for name, want in reference.state_dict().items():
        torch.testing.assert_close(got[name], want, rtol=1e-4, atol=1e-5, msg=name)
    if full_batch:  # no batch statistics: the same as one whole-batch step
        whole = accumulation_loop(copy.deepcopy(model), torch_loss, data, 1, 10**9)
        torch.testing.assert_close(torch.tensor(ours), torch.tensor(whole), rtol=1e-4, atol=0)
    return prog


@pytest.mark.parametrize("systems", [1, 2])
def test_mlp_matches_accumulation_and_full_batch(systems):
    """Batch 7 in micro-batches of 2: 4 per step on one system (the last of
    1 sample), 2 on each of two (shards 4 and 3)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    data = [(torch.randn(7, 6), torch.randn(7, 3)) for _ in range(STEPS)]
    prog = check_parity(model, SumMSE(7), nn.MSELoss(), data, systems, 2)
    report = prog.report()
    assert report["last_step"]["micro_batch_size"] == 2
    assert report["last_step"]["micro_batches"] == (4 if systems == 1 else 2)
    assert "micro-batch 2" in report["micro_batch"]


@pytest.mark.parametrize("systems", [1, 2])
def test_gpt_matches_accumulation_and_full_batch(systems):
    torch.manual_seed(0)
    model = GPT(vocab=64, d=32, heads=2, seq=8, layers=1)
    data = token_batches(STEPS, 5, 8, 64)
    check_parity(model, SumCrossEntropy(5), wsc.models.LMLoss(), data, systems, 2)


@pytest.mark.parametrize("systems", [1, 2])
def test_bert_with_padding_matches_accumulation_and_full_batch(systems):
    torch.manual_seed(0)
    model = BERT(vocab=64, d=32, heads=2, seq=8, layers=1, classes=3)
    data = padded_batches(STEPS, 5, 8, 64, 3)
    check_parity(model, SumCrossEntropy(5), nn.CrossEntropyLoss(), data, systems, 2)


@pytest.mark.parametrize("systems,batch", [(1, 32), (2, 63)])
def test_auto_splits_what_does_not_fit_and_matches(systems, batch):
    """On a 1x1-PE wafer the whole per-system batch of 32 does not fit PE
    SRAM: auto picks a smaller micro-batch by the cost model, and training
    with the stock nn.MSELoss (a mean over a constant count) still matches
    PyTorch's accumulation loop and full-batch training. With 63 samples
    on two systems the second shard (31) ends in a shorter micro-batch."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 8))
    reference = copy.deepcopy(model)
    data = [(torch.randn(batch, 256), torch.randn(batch, 8)) for _ in range(STEPS)]
    prog = wsc.compile(model, nn.MSELoss(), sgd(model.parameters()), data[0][0], data[0][1],
                       systems=systems, stream_dtype="f32", mode="weight_streaming",
                       grid=(1, 1), micro_batch_size="auto")
    size = prog.schedule["micro_batch_size"]
    assert 1 <= size < 32
    assert prog.report()["micro_batch"].startswith(f"micro-batch {size} of 32 per system (auto)")
    ours = [prog.step(x, y) for x, y in data]
    theirs = accumulation_loop(reference, nn.MSELoss(), data, systems, size)
    torch.testing.assert_close(torch.tensor(ours), torch.tensor(theirs), rtol=1e-4, atol=0)
    whole = accumulation_loop(copy.deepcopy(model), nn.MSELoss(), data, 1, 10**9)
    torch.testing.assert_close(torch.tensor(ours), torch.tensor(whole), rtol=1e-4, atol=0)
    assert prog.report()["last_step"]["peak_sram_per_pe_bytes"] <= 49152


def test_stream_bytes_grow_with_micro_batches():
    """Weights stream in again for every micro-batch; gradients go out per
    micro-batch too (SwarmX reduces each, MemoryX accumulates)."""
    torch.manual_seed(0)
    data = [(torch.randn(8, 6), torch.randn(8, 3))]
    reports = {}
    for size in (8, 2):
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
        prog, _ = train(model, SumMSE(8), data, 1, size)
        reports[size] = prog.report()["last_step"]
    assert reports[2]["micro_batches"] == 4 and reports[8]["micro_batches"] == 1
    assert reports[2]["bytes_in"] == pytest.approx(4 * reports[8]["bytes_in"])
    assert reports[2]["bytes_out"] == pytest.approx(4 * reports[8]["bytes_out"])


def test_trace_shows_each_micro_batch(tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    prog, _ = train(model, SumMSE(5), [(torch.randn(5, 6), torch.randn(5, 3))], 1, 2)
    path = tmp_path / "trace.json"
    prog._session.write_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    spans = [e["name"] for e in events if e.get("cat") == "micro-batch"]
    assert spans == ["micro-batch 0 (2 samples)", "micro-batch 1 (2 samples)",
                     "micro-batch 2 (1 samples)"]
    accumulates = [e for e in events if e.get("name", "").startswith("accumulate ")]
    assert len(accumulates) == 3 * 4  # per micro-batch, per parameter


@pytest.mark.parametrize("bad", [0, -2, 2.5, True, [2]])
def test_micro_batch_size_type_is_checked(bad):
    model = nn.Linear(3, 2)
    with pytest.raises(ValueError, match="micro_batch_size must be a positive int"):
        wsc.compile(model, nn.MSELoss(), sgd(model.parameters()), torch.randn(4, 3),
                    torch.randn(4, 2), micro_batch_size=bad)


def ignored_labels(data, every=3):
    """Token batches with every `every`-th label set to ignore_index -100,
    so micro-batches keep different counts of labels."""
    out = []
    for x, y in data:
        y = y.clone()
        y.view(-1)[::every] = -100
        out.append((x, y))
    return out


@pytest.mark.parametrize("systems", [1, 2])
def test_gpt_with_stock_mean_over_kept_labels_matches_accumulation(systems):
    """nn.CrossEntropyLoss's mean divides by the count of labels it keeps, a
    sum over the batch that the step computes. Each micro-batch's loss is
    its own mean weighted by its share of the samples, as in PyTorch's
    accumulation loop, which differs from one whole-batch step here."""
    torch.manual_seed(0)
    model = GPT(vocab=64, d=32, heads=2, seq=8, layers=1)
    data = ignored_labels(token_batches(STEPS, 5, 8, 64))
    check_parity(model, wsc.models.LMLoss(), wsc.models.LMLoss(), data, systems, 2,
                 full_batch=False)


def whole_batch_bessel(model, batch):
    """The one documented difference (docs/MicroBatching.md): the running
    variance's Bessel correction n / (n - 1) uses the whole batch's count,
    a constant of the exported step, not the micro-batch's. This hook moves
    PyTorch's update of each micro-batch by exactly that difference."""
    def hook(module, inputs, _):
        x = inputs[0].detach()
        dims = [0] + list(range(2, x.dim()))
        n = x.numel() // x.shape[1]
        whole = n // x.shape[0] * batch
        var = x.var(dim=dims, unbiased=False)
        with torch.no_grad():
            # .data: autograd saved running_var, which training-mode backward never reads.
            module.running_var.data += module.momentum * var * (whole / (whole - 1) - n / (n - 1))
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.register_forward_hook(hook)


def check_batchnorm_parity(prog, reference, ours, data, systems, size):
    whole_batch_bessel(reference, data[0][1].shape[0])
    theirs = accumulation_loop(reference, nn.CrossEntropyLoss(), data, systems, size)
    torch.testing.assert_close(torch.tensor(ours), torch.tensor(theirs), rtol=1e-4, atol=0)
    got = prog.state_dict()
    for name, want in reference.state_dict().items():
        if name.endswith("num_batches_tracked"):
            continue
        torch.testing.assert_close(got[name], want, rtol=1e-4, atol=1e-5, msg=name)


@pytest.mark.parametrize("systems", [1, 2])
def test_resnet_batchnorm_statistics_are_per_micro_batch(systems):
    """BatchNorm normalises each micro-batch by its own statistics (over
    micro-batch k of every system, SyncBN-style) and updates its running
    statistics once per micro-batch, as PyTorch's accumulation loop does.
    Batch 7 in micro-batches of 2: the last has 1 sample on one system, and
    on two systems (shards 4 and 3) micro-batch 1 has 2 + 1 samples."""
    torch.manual_seed(0)
    model = ResNet()
    data = [(torch.randn(7, 3, 16, 16), torch.randint(0, 10, (7,))) for _ in range(STEPS)]
    reference = copy.deepcopy(model)
    prog, ours = train(model, nn.CrossEntropyLoss(), data, systems, 2)
    assert prog.schedule["micro_batch_size"] == 2
    check_batchnorm_parity(prog, reference, ours, data, systems, 2)


@pytest.mark.parametrize("systems,batch", [(1, 16), (2, 31)])
def test_auto_with_batchnorm_and_stock_cross_entropy_matches(systems, batch):
    """On a tiny wafer auto splits a BatchNorm model trained with the stock
    nn.CrossEntropyLoss, and it matches PyTorch's accumulation loop."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.BatchNorm1d(256), nn.ReLU(),
                          nn.Linear(256, 8))
    reference = copy.deepcopy(model)
    data = [(torch.randn(batch, 256), torch.randint(0, 8, (batch,))) for _ in range(STEPS)]
    prog = wsc.compile(model, nn.CrossEntropyLoss(), sgd(model.parameters()), data[0][0],
                       data[0][1], systems=systems, stream_dtype="f32",
                       mode="weight_streaming", grid=(1, 1), micro_batch_size="auto")
    size = prog.schedule["micro_batch_size"]
    assert 1 <= size < 16
    ours = [prog.step(x, y) for x, y in data]
    check_batchnorm_parity(prog, reference, ours, data, systems, size)
    assert prog.report()["last_step"]["peak_sram_per_pe_bytes"] <= 49152


def test_auto_reports_the_peak_the_step_is_compiled_with():
    """auto's remark gives the step's peak SRAM at the size it chose, as the
    step is compiled there: on one system at the whole batch without the
    all-reduces micro-batches would need. It bounds the emulator's peak."""
    torch.manual_seed(0)
    model = ResNet()
    x, y = torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))
    prog = wsc.compile(model, nn.CrossEntropyLoss(), sgd(model.parameters()), x, y,
                       stream_dtype="f32", mode="weight_streaming", micro_batch_size="auto")
    decision = prog.report()["micro_batch"]
    assert decision.startswith("micro-batch 8 of 8 per system (auto)"), decision
    assert not any(s["op"] == "all_reduce" for s in prog.schedule["steps"])
    compiled = int(decision.split("peak SRAM ")[1].split(" ")[0])
    prog.step(x, y)
    assert prog.report()["last_step"]["peak_sram_per_pe_bytes"] <= compiled
