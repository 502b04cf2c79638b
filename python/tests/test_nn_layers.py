"""Layers beyond plain Conv2d: grouped, depthwise, dilated, 1-D and transposed
convolutions, GroupNorm, in-place activations (with hardswish and
hardsigmoid) and AdaptiveAvgPool2d with uneven bins.

Each model trains on the emulator against PyTorch eager (parity.train_both:
the loss at every step and the final weights at rtol 1e-4) on one and two
systems streaming weights, and layer-pipelined on one (none has BatchNorm).
The exported MLIR of every case also runs on upstream MLIR's CPU JIT
(mlir_exec.py) against eager: loss and gradients after one step, and the
inference forward of a few.
"""
import copy

import numpy as np
import pytest
import torch
from torch import nn

import mlir_exec
import wsc
import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from parity import check, train_both
from test_numerics_cnn import _arrays, _eager, state
from wsc.export import UnsupportedOpError, export_inference, export_training_step

STEPS = 3


def _head(shape, *layers, classes=3):
    """``layers``, flatten and a Linear sized for inputs of ``shape``."""
    body = nn.Sequential(*layers, nn.Flatten())
    with torch.no_grad():
        features = body(torch.zeros(shape)).shape[1]
    return nn.Sequential(*body, nn.Linear(features, classes))


def _activations():
    """Every in-place activation between 1x1 convs (an in-place op must not
    overwrite what the previous one's backward reads), scaled inputs so that
    all pieces of the piecewise ones (|x| > 3, > 6) are hit."""
    layers = [nn.Conv2d(3, 6, 1)]
    for act in (nn.SiLU(inplace=True), nn.Hardswish(inplace=True), nn.ReLU6(inplace=True),
                nn.Hardsigmoid(inplace=True), nn.ReLU(inplace=True), nn.ELU(0.7, inplace=True),
                nn.LeakyReLU(0.1, inplace=True), nn.Hardtanh(-1.0, 2.0, inplace=True),
                nn.Hardswish(), nn.Hardsigmoid()):
        layers += [act, nn.Conv2d(6, 6, 1)]
    return layers


class InPlaceComparisons(nn.Module):
    """Comparisons and logical ops in place on float tensors, which keep
    their dtype (the functional ops return bool): masks as 0.0 / 1.0."""

    def forward(self, h):
        above = h.detach().clone()
        above.gt_(0.5)
        outside = h.detach().clone()
        outside.le_(-0.5).logical_not_()
        return h * above + torch.tanh(h) * outside


class MaskAndIntegerOps(nn.Module):
    """~ on a bool mask (aten.bitwise_not) and abs of integers."""

    def forward(self, h):
        keep = ~(h > 0.5)
        steps = (h * 3).long().abs()
        return torch.where(keep, h, torch.tanh(h)) + steps.float() * 0.1


class Resize(nn.Module):
    """F.interpolate in every mode wsc lowers: nearest and bilinear, by size
    and by scale factor, either align_corners, up and down."""

    def forward(self, h):
        h = nn.functional.interpolate(h, scale_factor=2, mode="nearest")           # 5 -> 10
        h = torch.tanh(nn.functional.interpolate(h, size=(7, 13), mode="bilinear",
                                                 align_corners=False))             # down, up
        h = nn.functional.interpolate(h, scale_factor=1.5, mode="bilinear",
                                      align_corners=True)                          # 10 x 19
        return nn.functional.interpolate(h, size=(4, 6), mode="nearest")


class Rearrange(nn.Module):
    """flip, roll, cumsum, F.pad (growing and cropping), repeat, and a
    gather by a buffer of indices (x[:, idx]) and of a table parameter by
    one (swin's relative position bias)."""

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(9, 4))
        self.register_buffer("index", torch.tensor([[0, 3, 8, 3, 1], [2, 2, 7, -1, 4]]))
        self.register_buffer("channels", torch.tensor([3, 0, 1, 1]))

    def forward(self, h):
        h = torch.flip(h, (3,)) + torch.roll(h, (1, -2), (2, 3)) * 0.5
        h = torch.tanh(torch.cumsum(h, 3) * 0.3) + torch.flip(torch.cumsum(h, 2), (1, 2)) * 0.1
        h = nn.functional.pad(h, (1, 2, -1, 1))                      # (N, 4, 5, 9)
        bias = self.table[self.index].permute(2, 0, 1).sum(1)          # (4, 5)
        h = h[:, self.channels] + bias[:, :, None]
        return h.repeat(1, 1, 2, 1)


class SliceWrites(nn.Module):
    """Writes into slices of other tensors, as swin builds its shifted-window
    mask (``mask[h0:h1, w0:w1] = count``), and into an activation: slices,
    strided slices and a select."""

    def forward(self, h):
        mask = h.new_zeros(h.shape[2:])
        count = 0
        for rows in (slice(0, 2), slice(2, None)):
            for cols in (slice(0, -2), slice(-2, None)):
                mask[rows, cols] = count
                count += 1
        g = h.clone()
        g[:, 1:3] = 0.5 * g[:, 1:3]
        g[:, :, ::2] = torch.tanh(g[:, :, ::2])
        g[:, 0] = h[:, 3] * 2
        return g + mask


class Bilinear(nn.Module):
    """nn.Bilinear (aten._trilinear) of the flattened features with themselves."""

    def __init__(self, features):
        super().__init__()
        self.bilinear = nn.Bilinear(features, features, 5)

    def forward(self, h):
        h = h.flatten(1)
        return torch.tanh(self.bilinear(h, torch.sin(h)))


# name -> (input shape, layers); each is seeded by the caller.
CASES = {
    "grouped_depthwise": ((4, 4, 9, 9), lambda: [
        nn.Conv2d(4, 8, 3, padding=1, groups=2), nn.ReLU(),
        nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8, bias=False), nn.ReLU(),  # depthwise
        nn.Conv2d(8, 6, (3, 1), stride=(1, 2), groups=2)]),
    "dilated": ((4, 3, 11, 10), lambda: [
        nn.Conv2d(3, 6, 3, padding=2, dilation=2), nn.Tanh(),
        nn.Conv2d(6, 4, (3, 2), stride=2, padding=(1, 4), dilation=(3, 2)), nn.Tanh(),
        nn.Conv2d(4, 4, 2, padding=3, dilation=2, groups=2)]),  # padding > the window's reach
    "conv1d_groupnorm": ((4, 3, 20), lambda: [
        nn.Conv1d(3, 8, 5, stride=2, padding=2), nn.GroupNorm(4, 8), nn.SiLU(),
        nn.Conv1d(8, 8, 3, padding=2, dilation=2, groups=2), nn.GroupNorm(2, 8, affine=False),
        nn.Tanh(), nn.Conv1d(8, 4, 1), nn.GroupNorm(1, 4)]),
    "conv_transpose": ((4, 4, 5, 5), lambda: [
        nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2), nn.Tanh(),
        nn.ConvTranspose2d(6, 3, (2, 3), stride=(2, 1), dilation=(1, 2), bias=False), nn.Tanh(),
        nn.ConvTranspose2d(3, 2, 2, stride=3, padding=2, output_padding=1)]),  # padding > reach
    "conv_transpose_1d": ((4, 3, 6), lambda: [
        nn.ConvTranspose1d(3, 4, 4, stride=3, padding=1, output_padding=2), nn.Tanh(),
        nn.ConvTranspose1d(4, 4, 3, padding=1, groups=4)]),
    "inplace_activations": ((4, 3, 5, 5), _activations),
    "inplace_comparisons": ((4, 3, 5, 5), lambda: [nn.Conv2d(3, 4, 1), InPlaceComparisons(),
                                                   nn.Conv2d(4, 4, 1)]),
    "mask_and_integer_ops": ((4, 3, 5, 5), lambda: [nn.Conv2d(3, 4, 1), MaskAndIntegerOps(),
                                                    nn.Conv2d(4, 4, 1)]),
    "upsample": ((4, 3, 5, 5), lambda: [nn.Conv2d(3, 4, 1), Resize(), nn.Conv2d(4, 4, 3),
                                        nn.Upsample(scale_factor=2), nn.Upsample(
                                            size=5, mode="bilinear", align_corners=True)]),
    "prelu_pixel_shuffle": ((4, 3, 5, 5), lambda: [
        nn.Conv2d(3, 8, 1), nn.PReLU(8, 0.1), nn.PixelShuffle(2), nn.PReLU(), nn.Conv2d(2, 4, 1),
        nn.PixelUnshuffle(2), nn.InstanceNorm2d(16, affine=True), nn.Conv2d(16, 4, 1)]),
    "rearrange": ((4, 3, 5, 6), lambda: [nn.Conv2d(3, 4, 1), Rearrange(), nn.Conv2d(4, 4, 1)]),
    "slice_writes": ((4, 3, 5, 5), lambda: [nn.Conv2d(3, 4, 1), SliceWrites(), nn.Conv2d(4, 4, 1)]),
    "bilinear": ((4, 3, 3, 3), lambda: [nn.Conv2d(3, 2, 1), Bilinear(18)]),
    "adaptive_avgpool_uneven": ((4, 3, 5, 7), lambda: [
        nn.Conv2d(3, 4, 1), nn.AdaptiveAvgPool2d((3, 4)), nn.Tanh(),   # 5 -> 3, 7 -> 4: overlap
        nn.AdaptiveAvgPool2d(7), nn.ReLU(),                             # 3x4 -> 7x7: repeats
        nn.AdaptiveAvgPool2d(1), nn.AdaptiveAvgPool2d((7, 2))]),        # VGG's head on 1x1
}


def _case(name):
    torch.manual_seed(0)
    shape, layers = CASES[name]
    x = torch.randn(shape) * 2
    model = _head(shape, *layers())
    batches = [(torch.randn(shape) * 2, torch.randint(0, 3, (shape[0],))) for _ in range(STEPS)]
    return model, x, batches


@pytest.mark.parametrize("systems,mode", [(1, "weight_streaming"), (2, "weight_streaming"),
                                          (1, "layer_pipelined")])
@pytest.mark.parametrize("name", sorted(CASES))
def test_trains_like_pytorch(name, systems, mode):
    model, _, batches = _case(name)
    prog, reference, ours, theirs = train_both(model, nn.CrossEntropyLoss(), batches, systems,
                                               mode=mode)
    assert prog.report()["mode"] == mode
    check(prog, reference, ours, theirs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_exported_step_matches_eager(name):
    model, x, _ = _case(name)
    loss_fn, y = nn.CrossEntropyLoss(), torch.randint(0, 3, (x.shape[0],))
    text = export_training_step(model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
    params, buffers = state(model)  # read-only buffers (index tables): not returned
    got = mlir_exec.run(text, "train_step", _arrays(params) + _arrays(buffers)
                        + [x.numpy(), y.numpy()])
    want, _ = _eager(model, loss_fn, x, y)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.detach().numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", ["conv1d_groupnorm", "conv_transpose", "grouped_depthwise"])
def test_exported_forward_matches_eager(name):
    model, x, _ = _case(name)
    got = mlir_exec.run(export_inference(model, x), "forward",
                        _arrays(state(model)[0]) + [x.numpy()])
    with torch.no_grad():
        np.testing.assert_allclose(got[0], model(x).numpy(), rtol=1e-4, atol=1e-6)


def test_conv3d_is_refused_naming_the_module():
    model = nn.Sequential(nn.Conv3d(2, 3, 3), nn.Flatten(), nn.Linear(3 * 8, 2))
    x, y = torch.randn(2, 2, 3, 3, 10), torch.randint(0, 2, (2,))
    with pytest.raises(UnsupportedOpError, match=r"aten.convolution.default \(from module '0', "
                                                 r"Conv3d\).*3-D convolution"):
        export_training_step(model, nn.CrossEntropyLoss(),
                             torch.optim.SGD(model.parameters(), lr=0.1), x, y)


def test_a_write_into_a_slice_read_through_an_older_view_is_refused():
    """``old`` views ``g`` before the write and is read after it: in PyTorch it
    sees the write, and a functional copy would not, so the exporter refuses."""
    class Stale(nn.Module):
        def forward(self, h):
            g = h.clone()
            old = g[:, :2]
            g[:, 1:3] = 0.0
            return old.sum(1, keepdim=True) + g

    model = _head((2, 4, 3, 3), nn.Conv2d(4, 4, 1), Stale())
    x, y = torch.randn(2, 4, 3, 3), torch.randint(0, 3, (2,))
    with pytest.raises(UnsupportedOpError, match=r"aten.fill_.Tensor \(from module '1', "
                                                 r"Stale\).*in-place update of a tensor "
                                                 r"that has views"):
        export_training_step(model, nn.CrossEntropyLoss(),
                             torch.optim.SGD(model.parameters(), lr=0.1), x, y)


class Bags(nn.Module):
    """nn.EmbeddingBag on fixed-size bags of token ids (2-D input), in every
    mode; the mean skips padding_idx entries."""

    def __init__(self):
        super().__init__()
        self.mean = nn.EmbeddingBag(12, 6, mode="mean", padding_idx=0)
        self.max = nn.EmbeddingBag(12, 6, mode="max")
        self.sum = nn.EmbeddingBag(12, 6, mode="sum")
        self.scale = nn.Parameter(torch.rand(5))
        self.head = nn.Linear(18, 3)

    def forward(self, ids):
        weights = self.scale.expand(ids.shape[0], 5)
        return self.head(torch.cat([self.mean(ids), self.max(ids),
                                    self.sum(ids, per_sample_weights=weights)], 1))


@pytest.mark.parametrize("systems", [1, 2])
def test_embedding_bag_trains_like_pytorch(systems):
    torch.manual_seed(0)
    batches = []
    for _ in range(STEPS):
        ids = torch.randint(0, 12, (4, 5))
        ids[0, :3] = 0  # padding in the mean's bag
        ids[1] = 0      # a bag of padding only: its mean is 0
        batches.append((ids, torch.randint(0, 3, (4,))))
    prog, reference, ours, theirs = train_both(Bags(), nn.CrossEntropyLoss(), batches, systems)
    check(prog, reference, ours, theirs)


def test_embedding_bag_with_offsets_is_refused_naming_the_module():
    model = nn.Sequential(nn.EmbeddingBag(12, 6), nn.Linear(6, 3))

    class WithOffsets(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, ids):
            return self.inner[1](self.inner[0](ids.flatten(), torch.arange(0, ids.numel(), 5)))

    ids, y = torch.randint(0, 12, (4, 5)), torch.randint(0, 3, (4,))
    with pytest.raises(UnsupportedOpError, match=r"from module 'inner.0', EmbeddingBag\).*"
                                                 r"offsets"):
        export_training_step(WithOffsets(), nn.CrossEntropyLoss(),
                             torch.optim.SGD(model.parameters(), lr=0.1), ids, y)



class _MaxNormBag(nn.Module):
    """nn.Embedding(max_norm=1.0, padding_idx=0) as the issue reported it,
    with rows that start above the norm so that the renorm bites."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8, max_norm=1.0, padding_idx=0)
        self.fc = nn.Linear(8, 5)
        with torch.no_grad():
            self.emb.weight.mul_(3)

    def forward(self, ids):
        return self.fc(self.emb(ids).mean(1))


def _id_batches(steps, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randint(0, 20, (4, 6), generator=g), torch.randint(0, 5, (4,), generator=g))
            for _ in range(steps)]


@pytest.mark.parametrize("systems,mode", [(1, "weight_streaming"), (2, "weight_streaming"),
                                          (1, "layer_pipelined")])
def test_embedding_max_norm_renormalises_the_rows_it_looks_up(systems, mode):
    """The in-place renorm of the looked-up rows becomes a write of the
    parameter before its update (a buffer_update of a parameter), with the
    lookup counts all-reduced over the systems: every step matches eager,
    which was 0.69 (relative) away when the write was dropped."""
    torch.manual_seed(0)
    model = _MaxNormBag()
    before = model.emb.weight.detach().clone()
    prog, reference, ours, theirs = train_both(model, nn.CrossEntropyLoss(), _id_batches(3),
                                               systems, mode=mode)
    check(prog, reference, ours, theirs)
    assert not torch.allclose(reference.emb.weight, before, rtol=0.1)  # the renorm bit


def test_embedding_max_norm_with_fp16_streams_changes_only_the_renormed_rows():
    """With FP16 weight streams the renormed rows are computed from rounded
    weights; MemoryX applies their change to the FP32 master, so a row the
    batch never looked up keeps every bit, and a renormed one is PyTorch's
    renorm of the FP32 row to within the FP16 rounding of the row before
    the renorm (lr 0: the renorm alone)."""
    torch.manual_seed(0)
    model = _MaxNormBag()
    ids, y = _id_batches(1)[0]
    ids[:, -1] = 0  # some rows unused: ids are drawn from 20, used once here
    reference = copy.deepcopy(model)
    prog = wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.0),
                       ids, y, mode="weight_streaming", stream_dtype="f16")
    prog.step(ids, y)
    reference.emb(ids)  # renormalises in place
    got, want = prog.state_dict()["emb.weight"], reference.emb.weight.detach()
    used = torch.zeros(20, dtype=torch.bool)
    used[ids.unique()] = True
    assert torch.equal(got[~used], want[~used]) and (~used).any()
    # Off by at most the FP16 rounding of the row the renorm started from.
    original = model.emb.weight.detach()[used]
    assert ((got[used] - want[used]).abs() <= 2.0**-10 * original.abs()).all()
    assert not torch.allclose(want[used], original, rtol=0.1)


class _RunningMean(nn.Module):
    """A buffer written whole through a detached alias of itself."""

    def __init__(self):
        super().__init__()
        self.register_buffer("ema", torch.zeros(4))

    def forward(self, h):
        with torch.no_grad():
            self.ema.detach().copy_(0.9 * self.ema + 0.1 * h.mean(0))
        return h


def test_a_buffer_written_through_a_detached_alias_is_updated():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), _RunningMean(), nn.Linear(4, 3))
    batches = [(torch.randn(4, 4), torch.randint(0, 3, (4,))) for _ in range(3)]
    prog, reference, ours, theirs = train_both(model, nn.CrossEntropyLoss(), batches)
    assert reference[1].ema.abs().sum() > 0
    check(prog, reference, ours, theirs)


class _Apply(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.register_buffer("seen", torch.zeros(4))
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, h):
        return self.fn(self, h) * self.scale


def _assignment(module, h):
    g = h.clone()
    g[:, torch.tensor([0, 2])] = 1.0  # index_put without accumulate
    return g


def _parameter_slice(module, h):
    with torch.no_grad():
        module.scale[:2] = 1.0  # part of a parameter, through a view
    return h


def _chained_writes(module, h):
    with torch.no_grad():
        module.seen.detach().mul_(0.9).add_(h.mean(0))  # the add_ writes through the mul_
    return h + module.seen


def _buffer_slice(module, h):
    module.seen[:2] = h.detach().mean()  # part of a buffer, through a view
    return h + module.seen


@pytest.mark.parametrize("fn,message", [
    (_assignment, r"aten.index_put.default \(from the backward of module '1', _Apply\).*"
                  r"accumulate=False"),
    (_buffer_slice, r"\(from module '1', _Apply\) writes to buffer '1.seen' through a view "
                    r"of part of it or another in-place op's result"),
    (_parameter_slice, r"\(from module '1', _Apply\) writes to parameter '1.scale' through a "
                       r"view of part of it"),
    (_chained_writes, r"aten.add_.Tensor \(from module '1', _Apply\) writes to buffer '1.seen' "
                      r"through a view of part of it or another in-place op's result"),
], ids=["indexed-assignment", "buffer-slice", "parameter-slice", "chained-writes"])
def test_writes_the_step_cannot_keep_are_refused(fn, message):
    model = nn.Sequential(nn.Linear(4, 4), _Apply(fn), nn.Linear(4, 3))
    x, y = torch.randn(2, 4), torch.randint(0, 3, (2,))
    with pytest.raises(UnsupportedOpError, match=message):
        export_training_step(model, nn.CrossEntropyLoss(),
                             torch.optim.SGD(model.parameters(), lr=0.1), x, y)
