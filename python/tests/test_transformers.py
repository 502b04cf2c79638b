"""GPT- and BERT-style training on the emulator against PyTorch eager."""
import pytest
import torch
import torch.nn.functional as F

import wsc
import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from llama_style import Llama
from parity import check, sgd, train_both
from transformer_models import (BERT, GPT, HandAttention, LMLoss, TorchAttention,
                                padded_batches, token_batches)

STEPS = 10


@pytest.mark.parametrize("systems", [1, 2])
@pytest.mark.parametrize("attention,tied", [(HandAttention, True), (TorchAttention, False)])
def test_gpt_trains_like_pytorch(systems, attention, tied):
    torch.manual_seed(0)
    model = GPT(tied=tied, attention=attention)
    check(*train_both(model, LMLoss(), token_batches(STEPS, 4, 64, 512), systems,
                      mode="weight_streaming"))


@pytest.mark.parametrize("systems", [1, 2])
@pytest.mark.parametrize("attention", [HandAttention, TorchAttention])
def test_bert_with_padding_trains_like_pytorch(systems, attention):
    torch.manual_seed(0)
    model = BERT(attention=attention)
    check(*train_both(model, torch.nn.CrossEntropyLoss(),
                      padded_batches(STEPS, 4, 64, 512, 3), systems, mode="weight_streaming"))


def test_tied_head_shares_one_memoryx_copy():
    torch.manual_seed(0)
    model = GPT(layers=1, seq=16, vocab=64, d=32, heads=2)
    data = token_batches(1, 2, 16, 64)
    prog = wsc.compile(model, LMLoss(), sgd(model.parameters()), *data[0], stream_dtype="f32")
    names = [p["name"] for p in prog.schedule["params"]]
    assert "tok.weight" in names and "head.weight" not in names
    prog.step(*data[0])
    state = prog.state_dict()
    assert torch.equal(state["head.weight"], state["tok.weight"])


def test_token_id_outside_the_table_is_an_error():
    torch.manual_seed(0)
    model = GPT(layers=1, seq=16, vocab=64, d=32, heads=2)
    x, y = token_batches(1, 2, 16, 64)[0]
    prog = wsc.compile(model, LMLoss(), sgd(model.parameters()), x, y, stream_dtype="f32")
    bad = x.clone()
    bad[1, 3] = 64
    with pytest.raises(Exception, match="out of bounds"):
        prog.step(bad, y)


def test_meta_model_exports_the_same_graph_without_weights():
    from wsc import models
    from wsc.export import export_training_step
    config = models.GPTConfig(vocab=64, d=32, heads=2, seq=16, layers=2)
    real = models.GPT(config)
    meta = models.GPT(config, device="meta")
    assert all(p.is_meta for p in meta.parameters())
    ids = torch.randint(0, 64, (2, 16))
    exported = [export_training_step(m, LMLoss(), torch.optim.AdamW(m.parameters()), x, x)
                for m, x in ((real, ids), (meta, ids.to("meta")))]
    assert exported[0] == exported[1]


def test_gpt3_config_parameter_counts():
    from wsc import models
    assert models.GPTConfig.gpt3("175b").params() == 174_604_259_328
    with pytest.raises(ValueError, match="unknown GPT-3 size '1t'"):
        models.GPTConfig.gpt3("1t")
    small = models.GPTConfig(vocab=64, d=32, heads=2, seq=16, layers=2, tied=False)
    assert small.params() == sum(p.numel() for p in models.GPT(small).parameters())


def test_embedding_gradient_is_costed_as_a_scatter():
    # The one-hot form loops over vocab x tokens x d; a scatter-add touches
    # one row per token. The cost must scale with tokens x d, not the vocab.
    torch.manual_seed(0)
    model = GPT(layers=1, tied=False)
    x, y = token_batches(1, 4, 64, 512)[0]
    prog = wsc.compile(model, LMLoss(), sgd(model.parameters()), x, y, stream_dtype="f32")
    (grad,) = [s for s in prog.schedule["steps"] if s["op"] == "kernel" and s["name"] == "tok.bwd"]
    tokens, d, vocab = 4 * 64, 128, 512
    assert 0 < grad["cost"]["flops"] <= 16 * tokens * d < vocab * tokens * d


def test_embedding_gradient_streams_only_the_rows_of_its_tokens():
    """An untied table's gradient leaves each system as the rows its tokens
    touched: the compiler predicts one row per token, the step moves one row
    per distinct token (index + values), and training still matches."""
    torch.manual_seed(0)
    vocab, d, seq, batch = 512, 32, 16, 4
    model = GPT(layers=1, tied=False, vocab=vocab, d=d, heads=2, seq=seq)
    data = token_batches(2, batch, seq, vocab)
    prog, reference, ours, theirs = train_both(model, LMLoss(), data, 2, mode="weight_streaming")
    check(prog, reference, ours, theirs)
    steps = [s for s in prog.schedule["steps"] if s["op"] == "gradient_stream"]
    (table,) = [s for s in steps if s["param"] == "tok.weight"]
    assert table["format"] == "rows"
    # Positions touch every row of their table: rows would cost more.
    assert [s["format"] for s in steps if s["param"] == "pos.weight"] == ["dense"]
    row = 4 + 4 * d
    assert table["bytes"] == (batch // 2) * seq * row < vocab * d * 4
    ids = data[-1][0]
    distinct = max(len(torch.unique(ids[:2])), len(torch.unique(ids[2:])))
    others = sum(s["bytes"] for s in steps if s is not table)
    # and the cross entropy's count of labels kept, all-reduced for its mean
    others += sum(s["bytes"] for s in prog.schedule["steps"] if s["op"] == "all_reduce")
    assert prog.report()["last_step"]["bytes_out"] == others + distinct * row


@pytest.mark.parametrize("systems", [1, 2])
def test_llama_style_model_with_rotary_tables_in_non_persistent_buffers(systems):
    """The rotary tables are buffers outside state_dict(): the program takes
    them from the model (it used to stop at the first step with "missing
    buffer 'freqs_cos'"), and its state_dict() stays keyed like the model's."""
    torch.manual_seed(0)
    model = Llama()
    assert "freqs_cos" not in model.state_dict()
    data = [(torch.randint(0, 40, (4, 16)), torch.randint(0, 40, (4, 16))) for _ in range(3)]
    prog, reference, ours, theirs = train_both(
        model, lambda out, y: F.cross_entropy(out.view(-1, out.size(-1)), y.view(-1)), data,
        systems, optimizer=lambda p: torch.optim.AdamW(p, lr=1e-3))
    check(prog, reference, ours, theirs)
    assert list(prog.state_dict()) == list(reference.state_dict())
