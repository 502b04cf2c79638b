"""What the user sees when the exporter cannot take a model: one short error
naming the aten op and the PyTorch module it came from, raised before any
torch internals reach the traceback, and never a tensor's values.

Parameters and inputs hold values whose digits would stand out (0.0123456 and
7.654321) so that a printed tensor would show in the formatted traceback.
"""
import traceback

import pytest
import torch
from torch import nn

import wsc
from wsc.export import UnsupportedOpError, export_inference

PARAM_VALUE, INPUT_VALUE = 0.0123456, 7.654321
MAX_MESSAGE = 400


class Apply(nn.Module):
    """Runs ``fn`` as a module, so the error can name it."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class WrongBackward(torch.autograd.Function):
    """Doubles in the forward; its backward reshapes the gradient wrongly."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad.view(3, -1)


def _conditional(x):
    return x * 2 if x.sum().item() > 0 else x


def _packed(x):  # (batch, length, features), packed and unpacked again
    packed = nn.utils.rnn.pack_padded_sequence(x, [x.shape[1]] * x.shape[0], batch_first=True)
    return nn.utils.rnn.pad_packed_sequence(packed, batch_first=True)[0]


def _distinct(model):
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(PARAM_VALUE)
    return model


def _compile(model, x, y, loss_fn=None):
    model = _distinct(model)
    wsc.compile(model, loss_fn or nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                x, y, stream_dtype="f32")


def _failure(action, kind=UnsupportedOpError) -> str:
    """The error's message, after checking what a user would see printed."""
    with pytest.raises(kind) as info:
        action()
    err = info.value
    printed = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    assert len(str(err)) < MAX_MESSAGE, str(err)
    assert str(PARAM_VALUE)[:6] not in printed and str(INPUT_VALUE)[:5] not in printed
    assert "torch/" not in printed, printed  # no frame of torch's own code
    return str(err)


def _features(shape=(4, 8)):
    return torch.full(shape, INPUT_VALUE)


# ------------------------------------------- ops fake tensors cannot run

@pytest.mark.parametrize("fn, message", [
    (lambda x: x + torch.nonzero(x).sum(),
     "aten.nonzero.default (from module '1', Apply) is not supported by the wsc exporter: "
     "its result depends on tensor values"),
    (lambda x: x[x > 0].sum() + x,
     "aten.index.Tensor (from module '1', Apply) is not supported by the wsc exporter: "
     "advanced indexing with a boolean mask (the result's shape depends on the data)"),
    (_conditional,
     "reading a tensor value in Python, e.g. .item() or data-dependent control flow "
     "(from module '1', Apply), is not supported by the wsc exporter"),
    # Fake tensors run this kernel on zeros, where it fails.
    (lambda x: x + torch.multinomial(x.abs() + 0.1, 1).float(),
     "aten.multinomial.default (from module '1', Apply) failed while tracing with fake "
     "tensors shaped like the example inputs: invalid multinomial distribution"),
], ids=["nonzero", "boolean-mask", "item-control-flow", "multinomial"])
def test_op_fake_tensors_cannot_run(fn, message):
    got = _failure(lambda: _compile(nn.Sequential(nn.Linear(8, 8), Apply(fn)), _features(),
                                    torch.randn(4, 8)))
    assert got.startswith(message), got


def test_packing_a_sequence():
    # A real-world case: the fake kernel insists on lengths on the CPU.
    model = nn.Sequential(nn.Linear(8, 8), Apply(_packed))
    got = _failure(lambda: _compile(model, _features((4, 5, 8)), torch.randn(4, 5, 8)))
    assert got.startswith("aten._pack_padded_sequence.default (from module '1', Apply) "
                          "failed while tracing with fake tensors shaped like the example "
                          "inputs: 'lengths' argument should be a 1D CPU int64 tensor"), got


def test_failure_in_the_backward_names_the_module_of_the_forward():
    model = nn.Sequential(nn.Linear(8, 8), Apply(WrongBackward.apply))
    got = _failure(lambda: _compile(model, _features(), torch.randn(4, 8)))
    assert got == ("aten.view.default (from the backward of module '1', Apply) failed while "
                   "tracing with fake tensors shaped like the example inputs: shape '[3, -1]' "
                   "is invalid for input of size 32")


# ---------------------------------------------- ops without a lowering

def test_op_without_a_lowering_names_the_module():
    model = nn.Sequential(nn.Linear(8, 8), Apply(lambda x: torch.fft.fft(x).real))
    got = _failure(lambda: _compile(model, _features(), torch.randn(4, 8)))
    assert got.startswith("aten._fft_r2c.default (from module '1', Apply) is not supported "
                          "by the wsc exporter"), got


# ------------------------------------ arguments that do not fit the model

def test_input_with_the_wrong_features_names_the_first_linear():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    got = _failure(lambda: _compile(model, _features((4, 7)), torch.randn(4, 3)))
    assert got.startswith("aten.")
    assert "(from module '0', Linear) failed while tracing with fake tensors shaped like the " \
           "example inputs: mat1 and mat2 shapes cannot be multiplied (4x7 and 8x16)" in got


def test_layers_that_do_not_fit_name_the_second_one():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
    got = _failure(lambda: _compile(model, _features((2, 3, 9, 9)), torch.randn(2, 3)))
    assert "(from module '2', Linear) failed while tracing" in got
    assert "mat1 and mat2 shapes cannot be multiplied (2x196 and 144x3)" in got
    # The same in a forward-only export.
    got = _failure(lambda: export_inference(_distinct(model), _features((2, 3, 9, 9))))
    assert "(from module '2', Linear) failed while tracing" in got


def test_image_with_the_wrong_channels_names_the_convolution():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
    got = _failure(lambda: _compile(model, _features((2, 1, 8, 8)), torch.randn(2, 3)))
    assert got.startswith("aten.convolution.default (from module '0', Conv2d) failed while "
                          "tracing with fake tensors shaped like the example inputs:"), got


def test_targets_of_the_wrong_shape_name_the_loss():
    model = nn.Sequential(nn.Linear(8, 3))
    got = _failure(lambda: _compile(model, _features(), torch.zeros(4, 1, dtype=torch.int64),
                                    nn.CrossEntropyLoss()))
    assert got.startswith("aten.nll_loss_forward.default (from the loss function, "
                          "CrossEntropyLoss) failed while tracing"), got


def test_errors_of_the_model_s_own_code_pass_through():
    def reject(x):
        raise ValueError("the model's own message")

    model = nn.Sequential(nn.Linear(8, 8), Apply(reject))
    with pytest.raises(ValueError, match="the model's own message"):
        _compile(model, _features(), torch.randn(4, 8))


def test_torch_messages_are_cut_before_any_tensor_and_kept_short():
    from wsc._export.errors import _short

    value = torch.full((2,), INPUT_VALUE)
    assert _short(f"cannot use {value!r} here\nsecond line") == "cannot use ..."
    assert _short(f"weights: Parameter containing:\n{value!r}") == "weights: ..."
    long = _short("x" * 1000)
    assert len(long) == 200 and long.endswith(" ...")


def test_a_lowering_that_fails_on_its_own_still_names_the_module(monkeypatch):
    """An exporter bug (a lowering raising KeyError, as aten.sqrt_ did in
    nn.CosineEmbeddingLoss) surfaces as an error naming the op and the
    module, not as a raw traceback."""
    from wsc._export.lowering.registry import LOWERINGS

    def broken(ctx, *args, **kwargs):
        raise KeyError(ctx.op)

    monkeypatch.setitem(LOWERINGS, torch.ops.aten.relu.default, broken)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    expected = (r"aten\.relu\.default \(from module '1', ReLU\): the wsc exporter failed to "
                r"lower it \(KeyError: .*\); this is a bug in wsc")
    with pytest.raises(UnsupportedOpError, match=expected):
        export_inference(model, torch.randn(2, 4))
