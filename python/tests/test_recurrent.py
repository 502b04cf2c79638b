"""nn.GRU, nn.LSTM, nn.RNN and their cells train on the emulator as in PyTorch.

The exporter unrolls them at trace time (wsc/_export/recurrent.py). Each case
trains 3 steps of SGD with momentum (parity.sgd) with f32 streams on 1, 2 or
3 systems and checks the loss of every step and the final weights against
eager at rtol 1e-4. Sequences are short (batch 6, length 5, 8 features).
Models take batch-first inputs: wsc shards dim 0 of every input; those with
batch_first=False transpose inside, as such a model must.
"""
import pytest
import torch
from torch import nn

from parity import check, train_both
from test_inference import infer
from wsc.export import UnsupportedOpError, export_training_step
from wsc._export.capture import capture_training
from wsc._export.provenance import describe

BATCH, LENGTH, FEATURES, HIDDEN, CLASSES = 6, 5, 8, 8, 3


class SequenceModel(nn.Module):
    """A recurrent layer and a Linear head over its last output and final
    hidden state ("classify"), or over every step ("tag")."""

    def __init__(self, kind, layers=1, batch_first=True, bidirectional=False, bias=True,
                 initial_state=False, task="classify", **extra):
        super().__init__()
        self.kind, self.batch_first, self.task = kind, batch_first, task
        self.rnn = getattr(nn, kind)(FEATURES, HIDDEN, num_layers=layers, bias=bias,
                                     batch_first=batch_first, bidirectional=bidirectional,
                                     **extra)
        directions = 2 if bidirectional else 1
        out = extra.get("proj_size") or HIDDEN
        self.states = layers * directions
        # The initial state comes from the input, so its gradient is checked too.
        self.init = nn.Linear(FEATURES, self.states * HIDDEN) if initial_state else None
        features = directions * out + (out if task == "classify" else 0)
        self.head = nn.Linear(features, CLASSES)

    def _initial_state(self, x):
        if self.init is None:
            return None
        h0 = torch.tanh(self.init(x.mean(1))).view(BATCH, self.states, HIDDEN).transpose(0, 1)
        if self.kind != "LSTM":
            return h0.contiguous()
        c0 = h0 * 0.5
        h0 = h0[..., :self.rnn.proj_size] if self.rnn.proj_size else h0
        return h0.contiguous(), c0.contiguous()

    def forward(self, x):  # x: (batch, length, features)
        state = self._initial_state(x)
        out, final = self.rnn(x if self.batch_first else x.transpose(0, 1), state)
        if not self.batch_first:
            out = out.transpose(0, 1)
        if self.task == "tag":
            return self.head(out)
        h_n = final[0] if self.kind == "LSTM" else final
        return self.head(torch.cat([out[:, -1], h_n[-1]], -1))


class Cells(nn.Module):
    """GRUCell, then LSTMCell, then RNNCell, stepped over the sequence."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRUCell(FEATURES, HIDDEN)
        self.lstm = nn.LSTMCell(HIDDEN, HIDDEN)
        self.rnn = nn.RNNCell(HIDDEN, HIDDEN, nonlinearity="relu")
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        h = state = r = None
        for t in range(x.shape[1]):
            h = self.gru(x[:, t], h)
            state = self.lstm(h, state)
            r = self.rnn(state[0], r)
        return self.head(r)


class PerSample(nn.Module):
    """An LSTM and a GRUCell run on each sample unbatched: (length, features)
    and (features,), from initial states of their own."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(FEATURES, HIDDEN, num_layers=2)
        self.cell = nn.GRUCell(HIDDEN, HIDDEN)
        self.init = nn.Linear(FEATURES, 2 * HIDDEN)
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        finals = []
        for i in range(x.shape[0]):
            sample = x[i]
            # (A Linear on a 1-D input would meet an exporter bug: matmul's
            # squeeze_ changes the recorded shape of its mm.)
            h0 = torch.tanh(self.init(sample[:1])).view(2, HIDDEN)
            out, (h_n, c_n) = self.lstm(sample, (h0, h0 * 0.5))
            finals.append((self.cell(out[-1], h_n[1]) + c_n[0]).unsqueeze(0))
        return self.head(torch.cat(finals))


def _data(task, seed=0):
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(3):
        x = torch.randn(BATCH, LENGTH, FEATURES, generator=g)
        y = (torch.randn(BATCH, LENGTH, CLASSES, generator=g) if task == "tag"
             else torch.randint(0, CLASSES, (BATCH,), generator=g))
        batches.append((x, y))
    return batches


CASES = {
    # name: (model arguments, systems)
    "gru": (dict(kind="GRU"), 1),
    "gru-2layer-bidirectional-time-major": (
        dict(kind="GRU", layers=2, batch_first=False, bidirectional=True), 2),
    "gru-time-major-tagging": (dict(kind="GRU", batch_first=False, task="tag"), 3),
    "gru-2layer-no-bias-initial-state": (
        dict(kind="GRU", layers=2, bias=False, initial_state=True, task="tag"), 2),
    "lstm-tagging": (dict(kind="LSTM", task="tag"), 1),
    "lstm-2layer-bidirectional-time-major": (
        dict(kind="LSTM", layers=2, batch_first=False, bidirectional=True), 3),
    "lstm-2layer-bidirectional-initial-state": (
        dict(kind="LSTM", layers=2, bidirectional=True, initial_state=True), 2),
    "lstm-projection": (dict(kind="LSTM", bidirectional=True, proj_size=4, task="tag"), 2),
    "rnn-relu-2layer-time-major": (
        dict(kind="RNN", layers=2, batch_first=False, nonlinearity="relu"), 2),
    # Dropout between layers: eager replays the emulator's draws (parity.py).
    "gru-3layer-bidirectional-dropout": (
        dict(kind="GRU", layers=3, bidirectional=True, dropout=0.3, task="tag"), 2),
    "lstm-2layer-time-major-dropout": (
        dict(kind="LSTM", layers=2, batch_first=False, dropout=0.3), 3),
}


@pytest.mark.parametrize("name", CASES)
def test_recurrent_layer_trains_like_pytorch(name):
    arguments, systems = CASES[name]
    torch.manual_seed(0)
    model = SequenceModel(**arguments)
    task = arguments.get("task", "classify")
    loss_fn = nn.MSELoss() if task == "tag" else nn.CrossEntropyLoss()
    prog, reference, ours, theirs = train_both(model, loss_fn, _data(task), systems=systems,
                                               mode="weight_streaming")
    check(prog, reference, ours, theirs)


def test_cells_train_like_pytorch():
    torch.manual_seed(0)
    check(*train_both(Cells(), nn.CrossEntropyLoss(), _data("classify"), systems=2))


def test_unbatched_sequences_match_pytorch():
    # A loop over the samples of a batch does not compile for wsc (the batch
    # cannot be sharded), so this runs the captured aten graph: the loss and
    # every gradient against eager. (The lowerings of its ops are the batched
    # cases' above.)
    torch.manual_seed(0)
    model, loss_fn = PerSample(), nn.CrossEntropyLoss()
    x, y = torch.randn(2, 3, FEATURES), torch.randint(0, CLASSES, (2,))
    captured = capture_training(model, loss_fn, x, y)
    params = list(model.state_dict(keep_vars=True).values())
    got = captured.graph(*[p.detach() for p in params], x, y)
    loss = loss_fn(model(x), y)
    loss.backward()
    want = [loss] + [p.grad for p in params]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-6)


def test_one_system_layer_pipelined():
    torch.manual_seed(0)
    model = SequenceModel("LSTM", layers=2)
    prog, reference, ours, theirs = train_both(model, nn.CrossEntropyLoss(), _data("classify"),
                                               mode="layer_pipelined")
    assert prog.report()["mode"] == "layer_pipelined"
    check(prog, reference, ours, theirs)


# ----------------------------------------------------------------- export

def _export(model, x=None, y=None):
    x = torch.randn(BATCH, LENGTH, FEATURES) if x is None else x
    y = torch.randint(0, CLASSES, (BATCH,)) if y is None else y
    return export_training_step(model, nn.CrossEntropyLoss(),
                                torch.optim.SGD(model.parameters(), lr=0.1), x, y)


def test_parameters_keep_their_state_dict_names():
    model = SequenceModel("LSTM", layers=2, bidirectional=True)
    text = _export(model)
    for name in model.state_dict():
        assert f'wsc.param = "{name}"' in text and f'wsc.grad = "{name}"' in text


def test_unrolled_ops_are_attributed_to_the_layer():
    model = SequenceModel("GRU", layers=2)
    x, y = torch.randn(BATCH, LENGTH, FEATURES), torch.randint(0, CLASSES, (BATCH,))
    graph = capture_training(model, nn.CrossEntropyLoss(), x, y).graph.graph
    gates = [n for n in graph.nodes if n.op == "call_function"
             and n.target in (torch.ops.aten.sigmoid.default, torch.ops.aten.tanh.default)]
    # Per step and layer: reset and update gates, the new gate.
    assert len(gates) == 3 * LENGTH * 2
    assert {describe(n) for n in gates} == {"from module 'rnn', GRU"}
    backward = {describe(n) for n in graph.nodes if n.op == "call_function"
                and n.target is torch.ops.aten.mm.default}
    assert "from the backward of module 'rnn', GRU" in backward


def test_time_major_model_input_is_refused():
    with pytest.raises(UnsupportedOpError) as err:
        _export(nn.Sequential(nn.LSTM(FEATURES, HIDDEN)))
    assert str(err.value) == (
        "module '0', LSTM reads model input 0 of shape [6, 5, 8] as (sequence, batch, "
        "features), but wsc takes dim 0 of every input as the batch: pass batch-first inputs "
        "(and batch_first=True, or transpose in the model)")


def test_wrong_feature_size_names_the_layer():
    with pytest.raises(UnsupportedOpError) as err:
        _export(SequenceModel("GRU"), x=torch.randn(BATCH, LENGTH, FEATURES + 1))
    assert "(from module 'rnn', GRU)" in str(err.value)
    assert "input.size(-1) must be equal to input_size. Expected 8, got 9" in str(err.value)


def test_packed_sequences_and_own_forwards_are_refused():
    class Packed(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(FEATURES, HIDDEN, batch_first=True)
            self.head = nn.Linear(HIDDEN, CLASSES)

        def forward(self, x):  # pack_padded_sequence itself cannot trace (see test_export_errors)
            sizes = torch.full((LENGTH,), BATCH, dtype=torch.int64)
            packed = nn.utils.rnn.PackedSequence(x.transpose(0, 1).flatten(0, 1), sizes)
            return self.head(self.gru(packed)[1][-1])

    class MyGRU(nn.GRU):
        def forward(self, x, h=None):
            return super().forward(x * 2, h)

    with pytest.raises(UnsupportedOpError, match="module 'gru', GRU is given a PackedSequence"):
        _export(Packed())
    model = SequenceModel("GRU")
    model.rnn = MyGRU(FEATURES, HIDDEN, batch_first=True)
    with pytest.raises(UnsupportedOpError, match="module 'rnn', MyGRU has a forward of its own"):
        _export(model)


class Encoder(nn.Module):
    """Returns a recurrent layer's outputs and final states, batch first."""

    def __init__(self, kind, **arguments):
        super().__init__()
        self.rnn = getattr(nn, kind)(FEATURES, HIDDEN, batch_first=True, **arguments)

    def forward(self, x):
        out, final = self.rnn(x)
        states = final if isinstance(final, tuple) else (final,)
        return (out, *(s.transpose(0, 1) for s in states))


@pytest.mark.parametrize("kind, systems", [("GRU", 1), ("LSTM", 2)])
def test_inference_matches_pytorch(kind, systems, tmp_path):
    # Eval mode: the inter-layer dropout is off, as in PyTorch.
    torch.manual_seed(0)
    model = Encoder(kind, num_layers=2, bidirectional=True, dropout=0.25).eval()
    x = torch.randn(BATCH, LENGTH, FEATURES)
    _, outputs = infer(model, (x,), systems, tmp_path)
    with torch.no_grad():
        expected = model(x)
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        torch.testing.assert_close(torch.from_numpy(got), want, rtol=1e-4, atol=1e-6)


def test_eval_mode_ignores_dropout_and_training_resumes_afterwards():
    model = SequenceModel("GRU", layers=2, dropout=0.25).eval()
    text = _export(model)
    assert 'wsc.param = "rnn.weight_ih_l1"' in text
    # The capture restored the modules: eager runs the stock kernel again.
    assert "forward" not in vars(model.rnn)
    model(torch.randn(BATCH, LENGTH, FEATURES))
