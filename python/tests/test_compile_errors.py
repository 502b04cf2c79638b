"""Errors from wsc.compile are one short, located message (issue 21, item 7):
an option wsc-opt rejects, a wrong input shape, a batch that differs between
the example inputs and targets."""
import pytest
import torch
from torch import nn

import wsc
from wsc.export import UnsupportedOpError


def parts():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 2))
    return model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1)


def test_layer_pipelined_on_four_systems_is_a_short_compile_error():
    model, loss_fn, opt = parts()
    with pytest.raises(wsc.CompileError) as info:
        wsc.compile(model, loss_fn, opt, torch.randn(8, 3), torch.randint(0, 2, (8,)),
                    mode="layer_pipelined", systems=4)
    text = str(info.value)
    assert "layer-pipelined mode runs on one system, not 4; use systems=1 or " \
           "mode=weight_streaming" in text
    assert len(text.splitlines()) <= 3, text  # no module dump


def test_wrong_input_shape_names_the_module_without_a_torch_traceback():
    model, loss_fn, opt = parts()
    with pytest.raises(UnsupportedOpError) as info:
        wsc.compile(model, loss_fn, opt, torch.randn(4, 5), torch.randint(0, 2, (4,)))
    assert str(info.value) == (
        "aten.addmm.default (from module '0', Linear) failed while tracing with fake tensors "
        "shaped like the example inputs: mat1 and mat2 shapes cannot be multiplied (4x5 and 3x2)")
    assert info.value.__cause__ is None and info.value.__suppress_context__


@pytest.mark.parametrize("x,y,message", [
    (torch.randn(4, 3), torch.randint(0, 2, (5,)),
     "example_targets[0] has 5 rows in dim 0, not a multiple of the batch 4 "
     "(example_inputs[0]'s dim 0): dim 0 of every example input and target is the batch"),
    (torch.randn(6, 3), torch.randint(0, 2, (4,)),
     "example_inputs[0] has 6 rows in dim 0, not a multiple of the batch 4 "
     "(example_targets[0]'s dim 0)"),
    (torch.randn(4, 3), torch.tensor(1),
     "example_targets[0] is a scalar; dim 0 of every example input and target is the batch"),
])
def test_batch_mismatch_is_named_before_tracing(x, y, message):
    model, loss_fn, opt = parts()
    with pytest.raises(ValueError) as info:
        wsc.compile(model, loss_fn, opt, x, y)
    assert message in str(info.value)
