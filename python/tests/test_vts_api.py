"""wsc.nn strip/restore markers: eager identity, export to wsc ops, opting out,
and wsc.compile's vts flag."""

import copy
import re
import threading

import pytest
import torch
from torch import nn

import wsc
from wsc import compiler
from wsc._export.capture import DECOMPOSITIONS, capture_training
from vts_models import Encoder as ClassifyingEncoder, right_padded
from wsc.export import export_inference, export_training_step

STRIP, RESTORE = torch.ops.wsc.strip_padding.default, torch.ops.wsc.restore_padding.default
MARKER_LINE = re.compile(r"^\s*%\S+ = wsc\.(strip|restore)_padding (%\S+), (%\S+) "
                         r"\{seq_dim = (\d+) : i64\} : (tensor<[^>]*>), (tensor<[^>]*>)$")

LENGTHS = [16, 9, 3, 12]


def markers(text):
    """[(kind, x type, mask type, seq_dim)] of the wsc markers in ``text``, in order."""
    found = []
    for line in text.splitlines():
        if "wsc.strip_padding" in line or "wsc.restore_padding" in line:
            match = MARKER_LINE.match(line)
            assert match, f"malformed marker: {line}"
            kind, _, _, dim, xt, mt = match.groups()
            found.append((kind, xt, mt, int(dim)))
    return found


class Encoder(nn.Module):
    """Embedding -> strip -> body -> restore -> head (mean over the sequence)."""

    def __init__(self, vocab=50, d=32, classes=5, strip_ids=False, markers=True):
        super().__init__()
        self.emb, self.body = nn.Embedding(vocab, d), nn.Linear(d, d)
        self.head = nn.Linear(d, classes)
        self.strip_ids, self.markers = strip_ids, markers

    def forward(self, ids, valid):
        if self.strip_ids:
            ids = wsc.nn.strip_padding(ids, valid)
        x = self.emb(ids)
        if self.markers:
            x = wsc.nn.strip_padding(x, valid)
        x = torch.relu(self.body(x))
        if self.markers:
            x = wsc.nn.restore_padding(x, valid)
        return self.head(x).mean(1)


def batch(mask_dtype=torch.bool):
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 50, (4, 16), generator=g)
    valid = wsc.data.padding_mask(LENGTHS, 16).to(mask_dtype)
    return ids, valid, torch.randint(0, 5, (4,), generator=g)


def export(model, mask_dtype=torch.bool):
    ids, valid, y = batch(mask_dtype)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return export_training_step(model, nn.CrossEntropyLoss(), opt, (ids, valid), y)


# ------------------------------------------------------------ eager identity


@pytest.mark.parametrize("fn", [wsc.nn.strip_padding, wsc.nn.restore_padding])
@pytest.mark.parametrize("mask_dtype", [torch.bool, torch.int64, torch.float32])
@pytest.mark.parametrize("shape,seq_dim", [((4, 16), 1), ((4, 16, 8), 1), ((4, 16, 8), -2),
                                           ((4, 8, 16), 2), ((4, 8, 16), -1)])
def test_eager_identity(fn, mask_dtype, shape, seq_dim):
    x = torch.randn(shape)
    mask = wsc.data.padding_mask(LENGTHS, shape[seq_dim]).to(mask_dtype)
    out = fn(x, mask, seq_dim)
    assert out.shape == x.shape and out.dtype == x.dtype and torch.equal(out, x)


def test_eager_identity_on_token_ids():
    ids, valid, _ = batch()
    assert torch.equal(wsc.nn.strip_padding(ids, valid), ids)


@pytest.mark.parametrize("fn", [wsc.nn.strip_padding, wsc.nn.restore_padding])
def test_gradient_passes_through_unchanged(fn):
    x = torch.randn(4, 16, 8, requires_grad=True)
    upstream = torch.randn(4, 16, 8)
    fn(x, wsc.data.padding_mask(LENGTHS, 16)).backward(upstream)
    assert torch.equal(x.grad, upstream)


def test_backward_is_the_mirrored_op():
    x = torch.randn(4, 16, 8, requires_grad=True)
    valid = wsc.data.padding_mask(LENGTHS, 16)
    assert type(wsc.nn.strip_padding(x, valid).grad_fn).__name__ == "StripPaddingBackward"
    assert type(wsc.nn.restore_padding(x, valid).grad_fn).__name__ == "RestorePaddingBackward"
    # Second order: the gradient of a strip is itself differentiable (a restore).
    (g,) = torch.autograd.grad(wsc.nn.strip_padding(x, valid).pow(2).sum(), x, create_graph=True)
    assert type(g.grad_fn).__name__ == "RestorePaddingBackward"
    assert torch.allclose(g, 2 * x)


def test_model_with_markers_trains_like_without():
    torch.manual_seed(0)
    marked = Encoder(strip_ids=True)
    plain = copy.deepcopy(marked)
    plain.strip_ids, plain.markers = False, False
    ids, valid, y = batch()
    losses, grads = [], []
    for model in (marked, plain):
        loss = nn.CrossEntropyLoss()(model(ids, valid), y)
        loss.backward()
        losses.append(loss.detach())
        grads.append([p.grad for p in model.parameters()])
    assert torch.equal(losses[0], losses[1])
    for a, b in zip(*grads):
        assert torch.equal(a, b)


# ------------------------------------------------------------ argument errors


@pytest.mark.parametrize("args,error,message", [
    (("ids", "valid"), TypeError, r"x must be a torch\.Tensor, got str"),
    ((torch.zeros(4, 16), [[1] * 16] * 4), TypeError, r"mask must be a torch\.Tensor, got list"),
    ((torch.zeros(16), torch.ones(1, 16)), ValueError, r"rank >= 2\), got shape \[16\]"),
    ((torch.zeros(4, 16), torch.ones(4, 15)), ValueError,
     r"mask has shape \[4, 15\], expected \[4, 16\]"),
    ((torch.zeros(4, 16, 8), torch.ones(3, 16)), ValueError,
     r"mask has shape \[3, 16\], expected \[4, 16\] .* x of shape \[4, 16, 8\]"),
    ((torch.zeros(4, 16, 8), torch.ones(4, 16), 2), ValueError,
     r"mask has shape \[4, 16\], expected \[4, 8\]"),
    ((torch.zeros(4, 16), torch.ones(4, 16, dtype=torch.int32)), TypeError,
     r"mask has dtype int32; expected bool, int64, float32"),
    ((torch.zeros(4, 16), torch.ones(4, 16, dtype=torch.float64)), TypeError, r"dtype float64"),
    ((torch.zeros(4, 16), torch.ones(4, 16), 2), ValueError, r"seq_dim 2 is out of range"),
    ((torch.zeros(4, 16), torch.ones(4, 16), -3), ValueError, r"seq_dim -3 is out of range"),
    ((torch.zeros(4, 16), torch.ones(4, 16), 0), ValueError, r"seq_dim 0 is the batch dim"),
    ((torch.zeros(4, 16), torch.ones(4, 16), -2), ValueError, r"seq_dim -2 is the batch dim"),
    ((torch.zeros(4, 16), torch.ones(4, 16), 1.0), TypeError, r"seq_dim must be an int"),
    ((torch.zeros(4, 16), torch.ones(4, 16), True), TypeError, r"seq_dim must be an int"),
])
@pytest.mark.parametrize("fn", [wsc.nn.strip_padding, wsc.nn.restore_padding])
def test_argument_errors(fn, args, error, message):
    with pytest.raises(error, match=message):
        fn(*args)


def test_arguments_checked_even_when_disabled():
    with wsc.nn.vts_disabled(), pytest.raises(ValueError, match="mask has shape"):
        wsc.nn.strip_padding(torch.zeros(4, 16), torch.ones(4, 8))


def test_the_raw_op_checks_its_arguments_too():
    with pytest.raises(ValueError, match="batch dim"):
        STRIP(torch.zeros(4, 16), torch.ones(4, 16), 0)


# ------------------------------------------------------------ export


def test_markers_stay_out_of_the_decompositions():
    assert STRIP not in DECOMPOSITIONS and RESTORE not in DECOMPOSITIONS


def test_export_forward_and_mirrored_backward():
    torch.manual_seed(0)
    text = export(Encoder())
    f32, mask = "tensor<4x16x32xf32>", "tensor<4x16xi1>"
    # Forward: strip, restore. Backward, in reverse: the restore's gradient
    # is stripped, the strip's gradient restored.
    assert markers(text) == [("strip", f32, mask, 1), ("restore", f32, mask, 1),
                             ("strip", f32, mask, 1), ("restore", f32, mask, 1)]


def test_exported_marker_text_exact():
    torch.manual_seed(0)
    lines = export(Encoder()).splitlines()
    # Arguments: 5 parameters, then ids (%arg5) and the mask (%arg6).
    assert ("    %strip_padding = wsc.strip_padding %embedding, %arg6 {seq_dim = 1 : i64} : "
            "tensor<4x16x32xf32>, tensor<4x16xi1>") in lines


def test_captured_graph_puts_the_mirrors_in_the_backward():
    torch.manual_seed(0)
    model, loss_fn = Encoder(), nn.CrossEntropyLoss()
    ids, valid, y = batch()
    graph = capture_training(model, loss_fn, (ids, valid), y).graph
    phases = [(n.target, n.meta["wsc_scope"][0]) for n in graph.graph.nodes
              if n.target in (STRIP, RESTORE)]
    assert phases == [(STRIP, "forward"), (RESTORE, "forward"),
                      (STRIP, "backward"), (RESTORE, "backward")]


def test_strip_of_token_ids_has_no_backward():
    torch.manual_seed(0)
    found = markers(export(Encoder(strip_ids=True)))
    assert found[0] == ("strip", "tensor<4x16xi64>", "tensor<4x16xi1>", 1)
    assert [k for k, *_ in found] == ["strip", "strip", "restore", "strip", "restore"]
    assert sum(xt == "tensor<4x16xi64>" for _, xt, _, _ in found) == 1


@pytest.mark.parametrize("mask_dtype,elem", [(torch.bool, "i1"), (torch.int64, "i64"),
                                             (torch.float32, "f32")])
def test_mask_element_types(mask_dtype, elem):
    torch.manual_seed(0)
    found = markers(export(Encoder(), mask_dtype))
    assert {mt for _, _, mt, _ in found} == {f"tensor<4x16x{elem}>"}


def test_inference_export_has_forward_markers_only():
    torch.manual_seed(0)
    ids, valid, _ = batch()
    found = markers(export_inference(Encoder(strip_ids=True), (ids, valid)))
    assert [k for k, *_ in found] == ["strip", "strip", "restore"]


class LastDimSequence(nn.Module):
    """Sequence along the last dim (a conv-style layout), negative seq_dim."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x, valid):
        x = wsc.nn.strip_padding(self.proj(x), valid, seq_dim=-1)
        return wsc.nn.restore_padding(x, valid, -1).sum(1)


def test_negative_seq_dim_is_exported_normalised():
    torch.manual_seed(0)
    model = LastDimSequence()
    x, valid = torch.randn(4, 8, 16), wsc.data.padding_mask(LENGTHS, 16)
    text = export_training_step(model, nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                                (x, valid), torch.randn(4, 16))
    found = markers(text)
    assert len(found) == 4 and {d for *_, d in found} == {2}


def test_meta_device_model_exports_markers():
    # Shapes-only models trace on fake tensors with no fallback kernels, so
    # the markers' Meta kernels must do.
    torch.manual_seed(0)
    assert len(markers(export(Encoder().to("meta")))) == 4


@pytest.mark.parametrize("mask_dtype", [torch.bool, torch.int64, torch.float32])
def test_exported_markers_parse_with_wsc_opt(mask_dtype):
    torch.manual_seed(0)
    text = export(Encoder(strip_ids=True), mask_dtype)
    compiler.run_tool("wsc-opt", ["-"], text)


# ------------------------------------------------------------ opting out


class Wrapper(nn.Module):
    """An Encoder, then a strip/restore pair of its own at the top level."""

    def __init__(self):
        super().__init__()
        self.inner = Encoder()
        self.out = nn.Linear(5, 5)

    def forward(self, ids, valid):
        h = self.inner(ids, valid)  # (B, 5)
        h = wsc.nn.strip_padding(h[:, None, :].expand(-1, ids.shape[1], -1), valid)
        return self.out(wsc.nn.restore_padding(h, valid)).mean(1)


def test_disable_vts_on_the_model_removes_every_marker():
    torch.manual_seed(0)
    model = Encoder(strip_ids=True)
    assert wsc.nn.disable_vts(model) is model
    text = export(model)
    assert "wsc.strip_padding" not in text and "wsc.restore_padding" not in text
    assert "wsc." in text  # still the usual wsc.* attributes


def test_disable_vts_on_a_child_keeps_the_parents_markers():
    torch.manual_seed(0)
    model = Wrapper()
    assert len(markers(export(model))) == 8
    wsc.nn.disable_vts(model.inner)
    found = markers(export(model))
    assert len(found) == 4  # the wrapper's pair and its mirrors
    assert {xt for _, xt, _, _ in found} == {"tensor<4x16x5xf32>"}


def test_enable_vts_undoes_disable_vts():
    torch.manual_seed(0)
    model = Encoder()
    wsc.nn.disable_vts(model)
    wsc.nn.disable_vts(model)  # idempotent
    assert markers(export(model)) == []
    assert wsc.nn.enable_vts(model) is model
    assert "forward" not in vars(model)
    assert len(markers(export(model))) == 4


def test_a_deep_copy_of_a_disabled_module_runs_its_own_forward():
    torch.manual_seed(0)
    model = wsc.nn.disable_vts(Probe())
    clone = copy.deepcopy(model)
    clone(torch.zeros(1))
    assert clone.seen == [False] and model.seen == []
    assert markers(export(copy.deepcopy(wsc.nn.disable_vts(Encoder())))) == []


def test_disable_vts_rejects_a_patched_forward():
    model = Probe()
    model.forward = lambda x: x
    with pytest.raises(ValueError, match="has its own forward attribute"):
        wsc.nn.disable_vts(model)


class Probe(nn.Module):
    """Records whether VTS was on when its forward ran (and before/after a child)."""

    def __init__(self, child=None):
        super().__init__()
        self.child = child
        self.seen = []

    def forward(self, x):
        self.seen.append(wsc.nn.vts_enabled())
        if self.child is not None:
            x = self.child(x)
            self.seen.append(wsc.nn.vts_enabled())
        return x


def test_nested_disabled_modules():
    inner = wsc.nn.disable_vts(Probe())
    outer = wsc.nn.disable_vts(Probe(inner))
    outer(torch.zeros(1))
    assert inner.seen == [False]
    assert outer.seen == [False, False]  # still off after the inner one returns
    assert wsc.nn.vts_enabled()


def test_disabled_child_inside_enabled_parent():
    inner = wsc.nn.disable_vts(Probe())
    outer = Probe(inner)
    outer(torch.zeros(1))
    assert outer.seen == [True, True] and inner.seen == [False]


class Recursive(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = []

    def forward(self, depth):
        self.seen.append(wsc.nn.vts_enabled())
        if depth:
            self(depth - 1)
            self.seen.append(wsc.nn.vts_enabled())
        return depth


def test_reentering_a_disabled_module():
    model = wsc.nn.disable_vts(Recursive())
    model(2)
    assert model.seen == [False] * 5
    assert wsc.nn.vts_enabled()


class Raises(nn.Module):
    def forward(self, x):
        raise RuntimeError("boom")


def test_a_forward_that_raises_does_not_leave_vts_off():
    model = wsc.nn.disable_vts(Raises())
    with pytest.raises(RuntimeError, match="boom"):
        model(torch.zeros(1))
    assert wsc.nn.vts_enabled()


class CatchesChild(nn.Module):
    def __init__(self):
        super().__init__()
        self.child = wsc.nn.disable_vts(Raises())
        self.seen = []

    def forward(self, x):
        try:
            self.child(x)
        except RuntimeError:
            pass
        self.seen.append(wsc.nn.vts_enabled())
        return x


def test_a_caught_exception_in_a_disabled_child():
    model = CatchesChild()
    model(torch.zeros(1))
    assert model.seen == [True]


class EnablesItself(nn.Module):
    def forward(self, x):
        wsc.nn.enable_vts(self)  # mid-call: this call still ends its region
        return x


def test_enable_vts_mid_forward_does_not_leave_vts_off():
    model = wsc.nn.disable_vts(EnablesItself())
    model(torch.zeros(1))
    assert wsc.nn.vts_enabled()


def test_vts_disabled_context():
    torch.manual_seed(0)
    model = Encoder(strip_ids=True)
    with wsc.nn.vts_disabled():
        assert not wsc.nn.vts_enabled()
        with wsc.nn.vts_disabled():
            assert not wsc.nn.vts_enabled()
        assert not wsc.nn.vts_enabled()
        text = export(model)
    assert wsc.nn.vts_enabled()
    assert markers(text) == []
    assert len(markers(export(model))) == 5


def test_vts_disabled_context_survives_an_exception():
    with pytest.raises(KeyError):
        with wsc.nn.vts_disabled():
            raise KeyError("x")
    assert wsc.nn.vts_enabled()


def test_vts_disabled_is_per_thread():
    seen = []
    with wsc.nn.vts_disabled():
        worker = threading.Thread(target=lambda: seen.append(wsc.nn.vts_enabled()))
        worker.start()
        worker.join()
    assert seen == [True]


def test_disabled_markers_are_plain_identities():
    x, valid = torch.randn(4, 16, 8, requires_grad=True), wsc.data.padding_mask(LENGTHS, 16)
    with wsc.nn.vts_disabled():
        assert wsc.nn.strip_padding(x, valid) is x
        assert wsc.nn.restore_padding(x, valid) is x


def test_disable_vts_rejects_non_modules():
    with pytest.raises(TypeError, match="torch.nn.Module, got function"):
        wsc.nn.disable_vts(lambda x: x)


# ------------------------------------------------------------ wsc.compile(vts=...)


class _Stop(Exception):
    pass


_BAD_VTS = r"vts must be True, False or 'auto', got "
_BAD_FRACTION = r"valid_fraction must be a number in \(0, 1\], got "


@pytest.mark.parametrize("option,message", [
    *[({"vts": v}, _BAD_VTS) for v in ["on", "off", "AUTO", 1, 0, None, "true", 1.0]],
    *[({"valid_fraction": f}, _BAD_FRACTION) for f in [0, -0.5, 1.5, "0.5", True, float("nan")]],
])
def test_compile_rejects_bad_vts_options_before_export(monkeypatch, option, message):
    def no_export(*args, **kwargs):
        raise AssertionError("exported before checking the options")

    monkeypatch.setattr("wsc.export.export_training_step", no_export)
    model = nn.Linear(4, 2)
    with pytest.raises(ValueError, match=message):
        wsc.compile(model, nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                    torch.randn(4, 4), torch.randn(4, 2), **option)


def test_valid_fraction_sizes_layer_pipelined_regions():
    """Placed for a quarter of the tokens, a ragged layer's region is smaller;
    the schedule still gives a padded sample's cycles."""
    torch.manual_seed(0)
    models = {}
    for fraction in (None, 0.25):
        model = ClassifyingEncoder(vocab=32, d=16, heads=2, seq=16, layers=1)
        g = torch.Generator().manual_seed(0)
        ids, valid = right_padded([16] * 8, 16, 32, g)
        prog = wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                           (ids, valid), (torch.zeros(8, dtype=torch.long),),
                           mode="layer_pipelined", vts=True, valid_fraction=fraction)
        models[fraction] = prog.report()["placement"]["blocks.0.fc"]
    padded, quarter = models[None], models[0.25]
    assert quarter["formal"][0] * 4 == padded["formal"][0]  # rows per sample
    area = lambda m: m["region"]["width"] * m["region"]["height"]  # noqa: E731
    assert area(quarter) < area(padded)


@pytest.mark.parametrize("vts,option", [(True, "on"), (False, "off"), ("auto", "auto"),
                                        ("default", "auto")])
def test_compile_passes_vts_to_the_pipeline(monkeypatch, vts, option):
    calls = []

    def fake_run_tool(name, args, stdin):
        calls.append((name, args))
        raise _Stop()

    monkeypatch.setattr(compiler, "run_tool", fake_run_tool)
    model = nn.Linear(4, 2)
    kwargs = {} if vts == "default" else {"vts": vts}
    with pytest.raises(_Stop):
        wsc.compile(model, nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                    torch.randn(4, 4), torch.randn(4, 2), **kwargs)
    (name, args), = calls
    pipeline = args[0]
    assert name == "wsc-opt" and pipeline.startswith("--wsc-pipeline=")
    assert pipeline.split()[-1] == f"vts={option}"
    assert pipeline.count("vts=") == 1
