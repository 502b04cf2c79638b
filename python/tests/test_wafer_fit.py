"""The whole step must fit PE SRAM (issue #18 part 2): the report's
`peak_sram_per_pe_bytes` is never over the target's SRAM without a
compile-time warning, and without allow_sram_overflow such a step does not
compile."""
import pytest
import torch
from torch import nn

import wsc
import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from wsc.compiler import CompileError

SRAM = 49152  # the CS-2's bytes per PE, which a scaled-down grid keeps


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(256, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                         nn.Linear(2048, 10))


def _compile(grid, **options):
    model = _mlp()
    x, y = torch.randn(16, 256), torch.randint(0, 10, (16,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    prog = wsc.compile(model, nn.CrossEntropyLoss(), opt, x, y, mode="weight_streaming",
                       stream_dtype="f32", grid=grid, **options)
    prog.step(x, y)
    return prog


def test_a_peak_over_sram_is_never_silent():
    # 16 x 2048 activations kept for the backward pass on a 2 x 2 grid, with
    # nothing recomputed.
    report = _compile((2, 2), allow_sram_overflow=True, recompute="none").report()
    peak = report["last_step"]["peak_sram_per_pe_bytes"]
    assert peak > SRAM
    step = [w for w in report["warnings"] if "the step's live values need" in w]
    assert step, report["warnings"]
    assert f"over the {SRAM}-byte PE SRAM" in step[0]


def test_a_step_over_sram_does_not_compile():
    with pytest.raises(CompileError, match="PE SRAM"):
        _compile((2, 2), recompute="none")


def test_a_step_that_fits_reports_a_peak_within_sram():
    report = _compile((64, 64)).report()
    assert report["warnings"] == []
    assert 0 < report["last_step"]["peak_sram_per_pe_bytes"] <= SRAM


def test_every_kernel_runs_on_the_pes_its_layout_spreads_it_over():
    """A first convolution's backward computes only its weight gradient,
    whose operands all stream by (Figure 18): it still runs in its layout's
    PEs, not on one PE (which once made resnet50's step 640x too long)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.Flatten(), nn.Linear(16 * 16 * 16, 10))
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
    prog = wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                       x, y, mode="weight_streaming")
    costs = {s["name"]: s["cost"] for s in prog.schedule["steps"] if s["op"] == "kernel"}
    assert costs["0.bwd"]["flops"] > 0
    assert costs["0.bwd"]["pes"] > 1, costs["0.bwd"]
    assert all(c["pes"] > 1 for name, c in costs.items() if c["flops"] > 1e5), costs


def _deep_mlp():
    torch.manual_seed(0)
    layers = []
    for _ in range(12):
        layers += [nn.Linear(512, 512), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(512, 8))


def test_offloaded_activations_fit_and_train_the_same():
    """On a 1 x 1 grid the 12 layers' activations kept for the backward pass
    do not fit PE SRAM at once. offload_activations keeps them in MemoryX
    between the forward and backward pass: the step compiles, the numerics
    are unchanged, the emulator's peak is the compiler's (within SRAM), and
    the activations' streams are charged both ways."""
    x, y = torch.randn(4, 512), torch.randn(4, 8)

    def compile_(**options):
        model = _deep_mlp()
        options = {"recompute": "none", "micro_batch_size": "none", **options}
        return wsc.compile(model, nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.01),
                           x, y, mode="weight_streaming", stream_dtype="f32", grid=(1, 1),
                           **options)

    with pytest.raises(CompileError, match="the step's live values need"):
        compile_()
    resident = compile_(allow_sram_overflow=True)
    offloaded = compile_(offload_activations=True)
    assert offloaded.report()["memory_plan"].startswith(
        "memory plan offload (recompute=none): of 13 activations kept for the backward pass, "
        "0 stored, 0 recomputed, 13 offloaded")
    by_kernel = offloaded.report()["memory_by_kernel"]
    assert sum(e["offloaded_bytes_per_pe"] for e in by_kernel.values()) > 0
    assert not any("recomputed_by" in e for e in by_kernel.values())
    back = [v for v in offloaded.schedule["values"] if "offload_back_at" in v]
    assert len(back) == 13
    steps = offloaded.schedule["steps"]
    for v in back:  # each comes back for a backward kernel, or a conversion for one
        step = steps[v["offload_back_at"]]
        assert v["id"] in step.get("operands", [step.get("operand")]), step
        assert step["op"] == "layout_convert" or step["phase"] == "backward", step
    for _ in range(2):
        assert offloaded.step(x, y) == resident.step(x, y)
    ours, theirs = offloaded.report()["last_step"], resident.report()["last_step"]
    assert ours["peak_sram_per_pe_bytes"] <= SRAM < theirs["peak_sram_per_pe_bytes"]
    assert ours["bytes_in"] - theirs["bytes_in"] == pytest.approx(
        sum(4 * torch.Size(v["shape"]).numel() for v in back))
    assert ours["bytes_out"] - theirs["bytes_out"] == pytest.approx(
        ours["bytes_in"] - theirs["bytes_in"])


def test_default_options_fit_by_recomputing_and_train_the_same():
    """The same 12-layer MLP on a 1 x 1 grid compiles without options: the
    pipeline's default recompute=auto finds a plan that fits PE SRAM, and it
    trains bit for bit as the step that overflows it."""
    x, y = torch.randn(4, 512), torch.randn(4, 8)

    def compile_(**options):
        model = _deep_mlp()
        return wsc.compile(model, nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.01),
                           x, y, mode="weight_streaming", stream_dtype="f32", grid=(1, 1),
                           **options)

    planned = compile_()
    resident = compile_(recompute="none", allow_sram_overflow=True)
    assert planned.report()["memory_plan"].startswith("memory plan "), planned.report()
    for _ in range(2):
        assert planned.step(x, y) == resident.step(x, y)
    assert planned.report()["last_step"]["peak_sram_per_pe_bytes"] <= SRAM
    for name, value in planned.state_dict().items():
        assert torch.equal(value, resident.state_dict()[name]), name


def _googlenet(size, **options):
    """torchvision's GoogLeNet (no auxiliary heads), batch 2, mode auto."""
    import torchvision.models as tv
    torch.manual_seed(0)
    model = tv.googlenet(weights=None, num_classes=10, aux_logits=False, init_weights=True)
    x, y = torch.randn(2, 3, size, size), torch.randint(0, 10, (2,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    return wsc.compile(model, nn.CrossEntropyLoss(), opt, x, y, **options)


def test_auto_takes_only_a_mode_whose_layouts_fit():
    """At 224x224 GoogLeNet's footprint fits the wafer and layer-pipelined
    is estimated faster, but its layouts need more than a PE's SRAM at the
    last inception block: auto streams weights instead, and says why. (It
    used to take layer-pipelined and fail in wsc-assign-layouts.) At 96x96
    both fit, and auto keeps the faster one."""
    report = _googlenet(224, offload_activations=True).report()
    assert report["mode"] == "weight_streaming"
    assert "but its layouts do not fit PE SRAM (the step's live values need" in \
        report["mode_reason"], report["mode_reason"]
    assert _googlenet(96).report()["mode"] == "layer_pipelined"
