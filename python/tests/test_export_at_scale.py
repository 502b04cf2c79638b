"""Export at scale (issue 23 part 5): a deep stack of identical blocks is traced
at depths 4 and 5 and instantiated (wsc/_export/repeated.py), and nodes are
named in constant time (wsc/_export/names.py). The MLIR text must be byte for
byte the text of the reference path, which traces every block with fx's own
namer, as the exporter did before; where the stack cannot be instantiated the
export falls back to that path. Timings: bench/gpt3_compile.py --depths."""

import subprocess

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.fx.graph import _Namespace

from wsc import compiler, models
from wsc._export import repeated
from wsc._export.capture import (capture_inference, capture_training, named_parameters,
                                 state_names)
from wsc._export.module import inference_module, training_module
from wsc._export.names import LinearNamespace
from wsc._export.optimizer import optimizer_attributes
from wsc.export import export_inference, export_training_step

DEPTH = 6  # > repeated.CHECK_DEPTH, so that instantiating has something to do


@pytest.fixture
def instantiated(monkeypatch):
    """A list that gets, per export, whether repeated.capture built the graph."""
    used = []
    original = repeated.capture

    def spy(*args, **kwargs):
        gm = original(*args, **kwargs)
        used.append(gm is not None)
        return gm

    monkeypatch.setattr(repeated, "capture", spy)
    return used


def _training_texts(model, loss_fn, x, y):
    """(the export's text, the reference path's text)."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    text = export_training_step(model, loss_fn, optimizer, x, y)
    opt, groups = optimizer_attributes(optimizer, named_parameters(model))
    reference = capture_training(model, loss_fn, x, y, reference=True)
    return text, training_module(reference, opt, groups)


def _tiny_gpt(layers=DEPTH):
    torch.manual_seed(0)
    config = models.GPTConfig(vocab=64, d=16, heads=2, seq=8, layers=layers)
    return models.GPT(config), torch.randint(0, 64, (2, 8))


class Encoder(nn.Module):
    """nn.TransformerEncoder (with dropout: random draws) between a projection and a head."""

    def __init__(self, layers):
        super().__init__()
        self.embed = nn.Linear(8, 16)
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x)).mean(dim=1))


class MLPBlock(nn.Module):
    """A residual MLP block with BatchNorm (buffers the step updates)."""

    def __init__(self, width, hidden):
        super().__init__()
        self.norm = nn.BatchNorm1d(width)
        self.fc = nn.Linear(width, hidden)
        self.out = nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.out(F.gelu(self.fc(self.norm(x))))


class MLPStack(nn.Module):
    def __init__(self, hidden, scale_by_depth=False, glue=False):
        super().__init__()
        self.blocks = nn.Sequential(*[MLPBlock(12, h) for h in hidden])
        self.head = nn.Linear(12, 5)
        self.scale_by_depth, self.glue = scale_by_depth, glue

    def forward(self, x):
        if self.glue:  # something between the blocks
            for block in self.blocks:
                x = torch.tanh(block(x))
        else:
            x = self.blocks(x)
        if self.scale_by_depth:  # the glue reads the depth
            x = x / len(self.blocks)
        return self.head(x)


def _mlp_data():
    torch.manual_seed(1)
    return torch.randn(6, 12), torch.randint(0, 5, (6,))


# ------------------------------------------------------------ instantiated


def test_gpt_text_and_compile_match_the_full_trace(instantiated):
    model, ids = _tiny_gpt()
    text, reference = _training_texts(model, models.LMLoss(), ids, ids)
    assert instantiated == [True]
    assert text == reference
    assert len(model.blocks) == DEPTH and len(model.state_dict()) == 2 + 12 * DEPTH + 3
    compiled = [subprocess.run([compiler.tool_path("wsc-opt"), "--wsc-pipeline=systems=2"],
                               input=t, check=True, capture_output=True, text=True).stdout
                for t in (text, reference)]
    assert compiled[0] == compiled[1] and "wsc.kernel" in compiled[0]


def test_instantiated_graph_runs_like_eager(instantiated):
    # Its Python code is written at the first call (lazy_graph_module.py).
    model, ids = _tiny_gpt()
    captured = capture_training(model, models.LMLoss(), ids, ids)
    assert instantiated == [True]
    got = captured.graph(*[p.detach() for _, p in captured.params], ids, ids)
    loss = models.LMLoss()(model(ids), ids)
    want = [loss] + list(torch.autograd.grad(loss, [p for _, p in captured.params]))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-6)
    assert "def forward" in captured.graph.code


def test_gpt_inference_text_is_the_full_trace_text(instantiated):
    model, ids = _tiny_gpt()
    text = export_inference(model, ids)
    assert instantiated == [True]
    assert text == inference_module(capture_inference(model, ids, reference=True))


def test_transformer_encoder_with_dropout(instantiated):
    torch.manual_seed(0)
    model, x = Encoder(DEPTH), torch.randn(2, 5, 8)
    text, reference = _training_texts(model, nn.CrossEntropyLoss(), x, torch.tensor([0, 2]))
    assert instantiated == [True]
    assert text == reference
    assert "wsc.random" in text


def test_mlp_blocks_with_batchnorm_buffers(instantiated):
    torch.manual_seed(0)
    model = MLPStack([20] * DEPTH)
    x, y = _mlp_data()
    text, reference = _training_texts(model, nn.CrossEntropyLoss(), x, y)
    assert instantiated == [True]
    assert text == reference
    assert text.count("wsc.buffer_update") == 3 * DEPTH


def test_a_sequential_model_of_identical_blocks(instantiated):
    torch.manual_seed(0)
    model = nn.Sequential(*[MLPBlock(12, 20) for _ in range(DEPTH)])
    x = torch.randn(6, 12)
    text, reference = _training_texts(model, nn.MSELoss(), x, torch.randn(6, 12))
    assert instantiated == [True]
    assert text == reference


# ---------------------------------------------------------------- fallback


@pytest.mark.parametrize("model", [
    pytest.param(lambda: MLPStack([20, 20, 24, 20, 20, 20]), id="blocks-differ"),
    pytest.param(lambda: MLPStack([20] * DEPTH, glue=True), id="ops-between-blocks"),
    pytest.param(lambda: MLPStack([20] * DEPTH, scale_by_depth=True), id="reads-the-depth"),
    pytest.param(lambda: MLPStack([20] * (repeated.MIN_DEPTH - 1)), id="too-shallow"),
])
def test_falls_back_to_tracing_every_block(instantiated, model):
    torch.manual_seed(0)
    model = model()
    x, y = _mlp_data()
    text, reference = _training_texts(model, nn.CrossEntropyLoss(), x, y)
    assert instantiated == [False]
    assert text == reference


def test_a_stack_whose_glue_reads_its_depth_is_found_then_refused_by_the_check():
    # The stack qualifies; depths 4 and 5 differ in the constant the glue
    # divides by, so the instance built from depth 4 is not the depth-5 trace
    # and capture gives up (test_falls_back_to_tracing_every_block[reads-the-depth]).
    model = MLPStack([20] * DEPTH, scale_by_depth=True)
    stack = repeated.find_stack(model, state_names(model))
    assert stack is not None and stack.path == "blocks" and stack.depth == DEPTH


def test_blocks_sharing_a_module_are_not_a_stack():
    shared = MLPBlock(12, 20)
    model = nn.Sequential(*[shared] * DEPTH)
    assert repeated.find_stack(model, {}) is None


# ------------------------------------------------------------------- names


def test_linear_namespace_names_as_fx_does():
    candidates = ["view", "add", "view", "sum", "sum", "view_1", "add", "arg0", "view",
                  "getitem", "sum", "add_7", "add", "add", "add", "1x", "a.b", "view"] * 3
    ours, theirs = LinearNamespace(_Namespace()), _Namespace()
    assert [ours.create_name(c, None) for c in candidates] == \
        [theirs.create_name(c, None) for c in candidates]
