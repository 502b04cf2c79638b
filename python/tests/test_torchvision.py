"""torchvision classifiers (random init, nothing downloaded) trained on the
emulator against PyTorch eager: the loss at every step, the final weights and
the BatchNorm buffers at rtol 1e-4 (parity.check), on one system and on two
streaming weights, and layer-pipelined on one (BatchNorm buffers resident
on the wafer).

Image size, batch and learning rate are chosen so that float32 can match at
all. With random init, BatchNorm over a few values per channel (1x1 maps at
the end of a 32x32 image, batch 4) and the large gradients of depthwise
convolutions followed by BatchNorm make a few SGD steps chaotic: for
mobilenet_v2 at 32x32, batch 4, lr 0.05, eager float32 itself ends 15% away
from eager float64 in the loss after three steps, so no float32
implementation could match it at 1e-4. Each test first asserts that its
setting keeps eager within a third of the tolerance of float64 after the two
steps (parity.assert_well_conditioned); larger images or batches (2x2 last
maps, more values per channel) and small learning rates do that. squeezenet,
without BatchNorm, takes a usual rate. The small rates still catch gradient
errors: a grouped convolution's weight gradient read with its kernel
transposed fails every model that has one.

ReLU's kink is the other trap, and the assertion above cannot see it when
eager is lucky. With resnet18's data from the global generator, a ReLU input
of layer1.1 in the second step is 9e-7 in float64 (against values up to
4.3) and 1e-7 in eager: the emulator on one BLAS thread rounds it below
zero, and that unit's gradient takes 14% off a conv's weight gradient (a
final weight 2.6e-5 from float64). resnet18's data seed puts its nearest
kink 1.4x float32's largest deviation in that input away. regnet has inputs
within float32's deviation of a kink in every setting tried (7 data
and size choices), so eager's own rounding flips units too; at lr 3e-6 a flip
stays far inside the tolerance (eager ends at 0.17 of it here). Both
also run on one BLAS thread (test_trains_like_pytorch_on_one_blas_thread);
the whole file passes with OPENBLAS_NUM_THREADS=1 and 2.
"""
import copy
from typing import Callable, NamedTuple, Optional

import pytest
import torch
import torchvision.models as tv
import torchvision.models.segmentation as tvs
from torch import nn

import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from parity import (assert_well_conditioned, check, check_as_accurate_as_eager, train_both,
                    train_float64)

STEPS = 2
CLASSES = 10


class Setting(NamedTuple):
    build: Callable[[], nn.Module]
    size: int       # square images
    batch: int
    lr: float
    options: dict = {}  # for wsc.compile
    data_seed: Optional[int] = None  # None: the global generator after init


SETTINGS = {
    "resnet18": Setting(lambda: tv.resnet18(weights=None, num_classes=CLASSES), 32, 4, 1e-4,
                        data_seed=1),
    "mobilenet_v2": Setting(lambda: tv.mobilenet_v2(weights=None, num_classes=CLASSES,
                                                    width_mult=0.25), 48, 8, 1e-4),
    "mobilenet_v3_small": Setting(lambda: tv.mobilenet_v3_small(
        weights=None, num_classes=CLASSES, width_mult=0.5), 32, 4, 1e-4),  # hardswish_, hardsigmoid
    "shufflenet_v2_x0_5": Setting(lambda: tv.shufflenet_v2_x0_5(weights=None,
                                                                num_classes=CLASSES), 48, 4, 1e-4),
    "squeezenet1_1": Setting(lambda: tv.squeezenet1_1(weights=None, num_classes=CLASSES),
                             32, 4, 0.01),
    "efficientnet_b0": Setting(lambda: tv.efficientnet_b0(weights=None, num_classes=CLASSES),
                               32, 8, 1e-5),
    "regnet_y_400mf": Setting(lambda: tv.regnet_y_400mf(weights=None, num_classes=CLASSES),
                              64, 8, 3e-6, data_seed=2),
    "vgg11": Setting(lambda: tv.vgg11(weights=None, num_classes=CLASSES, dropout=0.1),
                     32, 2, 0.01, {"allow_sram_overflow": True}),
}


def _images(batch, size, labels, generator=None):
    """STEPS batches of random images with class labels of shape ``labels``."""
    return [(torch.randn((batch, 3, size, size), generator=generator),
             torch.randint(0, CLASSES, labels, generator=generator)) for _ in range(STEPS)]


def _momentum_sgd(lr):
    return lambda params: torch.optim.SGD(params, lr=lr, momentum=0.9)


def _train(name, systems, mode):
    setting = SETTINGS[name]
    torch.manual_seed(0)
    model = setting.build()
    initial = copy.deepcopy(model)
    g = None if setting.data_seed is None else torch.Generator().manual_seed(setting.data_seed)
    batches = _images(setting.batch, setting.size, (setting.batch,), g)
    sgd = _momentum_sgd(setting.lr)
    prog, reference, ours, theirs = train_both(model, nn.CrossEntropyLoss(), batches, systems,
                                               mode=mode, optimizer=sgd, **setting.options)
    assert prog.report()["mode"] == mode
    assert_well_conditioned(initial, reference, nn.CrossEntropyLoss(), sgd, batches,
                            prog.random_draws)
    check(prog, reference, ours, theirs)  # every state_dict entry: weights and buffers


@pytest.mark.parametrize("systems", [1, 2])
@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_trains_like_pytorch(name, systems):
    _train(name, systems, "weight_streaming")


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_trains_layer_pipelined_like_pytorch(name):
    _train(name, 1, "layer_pipelined")


@pytest.mark.parametrize("name", ["resnet18", "regnet_y_400mf"])
def test_trains_like_pytorch_on_one_blas_thread(name):
    """The two models whose old settings missed on one BLAS thread (the
    module docstring): their settings hold there too. The count is
    process-wide (torch shares the OpenBLAS), so it is put back."""
    before, loops = wsc._runtime.get_num_threads(), wsc._runtime.get_parallel_threads()
    if not wsc._runtime.set_num_threads(1):
        pytest.skip("this BLAS cannot set its thread count")
    try:
        _train(name, 1, "weight_streaming")
    finally:
        wsc._runtime.set_num_threads(before)
        wsc._runtime.set_parallel_threads(loops)


class Dense(NamedTuple):
    """A model of torchvision's segmentation list (per-pixel cross entropy on
    ``out``) or a transformer-era classifier, with the modes it is tested in."""
    build: Callable[[], nn.Module]
    size: int
    batch: int
    lr: float
    modes: tuple  # (systems, mode) pairs
    options: dict = {}
    segmentation: bool = True
    against_float64: bool = False  # compared with float64 (check_as_accurate_as_eager)


_SEG = dict(weights=None, weights_backbone=None, num_classes=CLASSES)
_BOTH = ((1, "weight_streaming"), (2, "weight_streaming"), (1, "layer_pipelined"))
DENSE = {
    # Upsampling (bilinear, align_corners=False) back to the input size.
    # Batch means near zero deep in the ResNet-50: eager float32 itself ends
    # 1.5x the tolerance from float64, so it is compared with float64.
    "fcn_resnet50": Dense(lambda: tvs.fcn_resnet50(**_SEG), 64, 2, 1e-4, _BOTH,
                          against_float64=True),
    "deeplabv3_mobilenet_v3_large": Dense(lambda: tvs.deeplabv3_mobilenet_v3_large(**_SEG),
                                          64, 2, 1e-3, _BOTH),
    "lraspp_mobilenet_v3_large": Dense(lambda: tvs.lraspp_mobilenet_v3_large(**_SEG),
                                       64, 2, 1e-3, _BOTH),
    # Shifted windows: roll, padding, a mask written slice by slice, relative
    # position bias gathered by index, stochastic depth; on one system it
    # keeps its activations for the backward pass in MemoryX.
    "swin_t": Dense(lambda: tv.swin_t(weights=None, num_classes=CLASSES), 64, 2, 1e-3,
                    ((1, "weight_streaming"), (2, "weight_streaming")),
                    {"offload_activations": True}, False),
    # Swin v2: a position-bias MLP over a constant table, whose weight
    # gradient comes before its last use (LowerWeightStreaming defers it).
    "swin_v2_t": Dense(lambda: tv.swin_v2_t(weights=None, num_classes=CLASSES), 64, 2, 1e-3,
                       ((1, "weight_streaming"),), {"offload_activations": True}, False),
    # LayerNorm over channels-last views; adaptive pooling of a permuted map.
    "convnext_tiny": Dense(lambda: tv.convnext_tiny(weights=None, num_classes=CLASSES), 64, 2,
                           1e-3, _BOTH, {}, False),
    # At 32 px the pool sees 1x1 maps, and a channels-last tensor with 1x1
    # maps counts as contiguous: composites.py pools a clone of it.
    "convnext_tiny_at_32_px": Dense(lambda: tv.convnext_tiny(weights=None, num_classes=CLASSES),
                                    32, 2, 1e-3, ((1, "weight_streaming"),), {}, False),
}


@pytest.mark.parametrize("name,systems,mode", [(name, systems, mode) for name in sorted(DENSE)
                                                for systems, mode in DENSE[name].modes])
def test_dense_and_window_models_train_like_pytorch(name, systems, mode):
    setting = DENSE[name]
    torch.manual_seed(0)
    model = setting.build()
    initial = copy.deepcopy(model)
    labels = (setting.batch, setting.size, setting.size) if setting.segmentation \
        else (setting.batch,)
    batches = _images(setting.batch, setting.size, labels)
    ce = nn.CrossEntropyLoss()
    loss_fn = (lambda out, y: ce(out["out"], y)) if setting.segmentation else ce
    sgd = _momentum_sgd(setting.lr)
    prog, reference, ours, theirs = train_both(model, loss_fn, batches, systems, mode=mode,
                                               optimizer=sgd, **setting.options)
    assert prog.report()["mode"] == mode
    if setting.against_float64:
        check_as_accurate_as_eager(prog, initial, reference, (ours, theirs), loss_fn, sgd,
                                   batches, prog.random_draws)
        return
    assert_well_conditioned(initial, reference, loss_fn, sgd, batches, prog.random_draws)
    check(prog, reference, ours, theirs)


def test_vgg11_at_224_px_is_as_accurate_as_eager():
    """vgg11 on one 224 px image, one SGD step: every bias update is at
    least as close to a float64 run as eager float32's, and the step
    matches eager at rtol 1e-4. Sums here run over up to 50,176 positions
    (a bias gradient of the first conv); the runtime accumulates float sums
    in double (InterpreterTest.LongSumsAccumulateInDouble).

    At this size a ReLU input within float32 rounding of zero is likely
    somewhere among the 13M units, and its flip moves every gradient below
    it by 1e-3 or more, in eager as in wsc: with 8 data seeds, eager
    float32 ends over 1e-4 from float64 in 4, wsc in 3. Seed 4 has no such
    unit near enough (assert_well_conditioned checks eager)."""
    torch.manual_seed(0)
    model = tv.vgg11(weights=None, num_classes=CLASSES, dropout=0.0)
    initial = copy.deepcopy(model)
    g = torch.Generator().manual_seed(4)
    batches = [(torch.randn(1, 3, 224, 224, generator=g),
                torch.randint(0, CLASSES, (1,), generator=g))]

    def sgd(params):
        return torch.optim.SGD(params, lr=0.01)

    prog, reference, ours, theirs = train_both(model, nn.CrossEntropyLoss(), batches, 1,
                                               mode="weight_streaming", optimizer=sgd,
                                               allow_sram_overflow=True)
    assert_well_conditioned(initial, reference, nn.CrossEntropyLoss(), sgd, batches)
    check(prog, reference, ours, theirs)
    exact, _ = train_float64(initial, nn.CrossEntropyLoss(), sgd, batches)
    start, got, eager = initial.state_dict(), prog.state_dict(), reference.state_dict()
    for name, want in exact.state_dict().items():
        if name.endswith("bias"):
            step = want - start[name].double()
            ours_off = (got[name].double() - start[name].double() - step).norm()
            eager_off = (eager[name].double() - start[name].double() - step).norm()
            assert ours_off <= eager_off * 1.25, (name, ours_off.item(), eager_off.item())
