"""docs/Coverage.md is generated from the exporter's tables (make test checks
the committed file is current); the generator itself: it lists every
lowered op and refuses a declared entry whose ops nothing handles."""
import torch

from wsc._export import coverage
from wsc._export.lowering import LOWERINGS
from wsc._export.lowering.supported import Entry


def test_every_lowered_op_is_listed():
    text = coverage.render()
    for op in LOWERINGS:
        if not coverage._writes_to_out(op):
            assert f"`{coverage._name(op)}`" in text, op


def test_a_declared_entry_without_a_lowering_is_an_error():
    stale = Entry("Fold", (torch.ops.aten.im2col, torch.ops.aten.mm), "")
    assert coverage.check_declared([stale]) == [
        "Fold: im2col has no lowering, decomposition or draw"]
