"""NaN and Inf (issue 21, item 5): a non-finite weight warns at load; the first
non-finite gradient or loss stops the step with a message naming the step and
the parameter; Program.allow_nonfinite trains on through them as before."""
import math

import pytest
import torch
from torch import nn

import wsc
import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)


def compiled(mode="weight_streaming"):
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    with torch.no_grad():
        model.weight[1, 2] = float("nan")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 3), torch.randint(0, 2, (4,))
    with pytest.warns(RuntimeWarning, match="weight 'weight' has 1 non-finite values"):
        prog = wsc.compile(model, nn.CrossEntropyLoss(), opt, x, y, mode=mode, target="tiny")
    return prog, x, y


@pytest.mark.parametrize("mode", ["weight_streaming", "layer_pipelined"])
def test_first_nonfinite_gradient_stops_the_step(mode):
    prog, x, y = compiled(mode)
    assert prog.allow_nonfinite is False
    with pytest.raises(ValueError, match=r"step 0: the gradient of parameter '[a-z]+' has \d+ "
                                         r"non-finite values? \(the first, element \d+, is nan\)"):
        prog.step(x, y)


def test_allow_nonfinite_trains_on():
    prog, x, y = compiled()
    prog.allow_nonfinite = True
    assert math.isnan(prog.step(x, y))
    assert math.isnan(prog.step(x, y))
    with pytest.raises(ValueError, match="allow_nonfinite must be a bool"):
        prog.allow_nonfinite = 1


def test_nan_loss_with_finite_gradients_stops_the_step():
    # Every label ignored: the mean over no labels is 0 / 0 = nan while the
    # gradients are zero, so the loss check, not the gradient's, stops it.
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    x, y = torch.randn(4, 3), torch.randint(0, 2, (4,))
    prog = wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                       x, y, target="tiny")
    prog.step(x, y)
    with pytest.raises(ValueError, match=r"^step 1: the loss is nan; training stops here"):
        prog.step(x, torch.full((4,), -100))


class MaskedHead(nn.Module):
    """A buffer that holds -inf on purpose (as a causal mask does)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("mask", torch.tensor([0.0, float("-inf")]))

    def forward(self, x):
        return self.fc(x) + self.mask


def test_a_nonfinite_buffer_is_not_warned_about():
    import warnings
    torch.manual_seed(0)
    model = MaskedHead()
    x, y = torch.randn(4, 3), torch.zeros(4, dtype=torch.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        prog = wsc.compile(model, nn.CrossEntropyLoss(),
                           torch.optim.SGD(model.parameters(), lr=0.1), x, y, target="tiny")
    assert math.isfinite(prog.step(x, y))
