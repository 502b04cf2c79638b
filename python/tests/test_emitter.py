"""Unit tests of the MLIR text builder and the reshape grouping."""

import numpy as np
import pytest
import torch

from wsc._export.emitter import (attribute, broadcast_map, dense_literal, f32_literal,
                                 f64_literal, string_literal)
from wsc._export.lowering.shapes import _groups
from wsc.export import export_inference

import mlir_exec
from mlir_check import verify


@pytest.mark.parametrize("value,text", [
    (0.0, "0.0"), (1.0, "1.0"), (-2.5, "-2.5"), (1e-05, "9.999999747378752e-06"),
    (float("inf"), "0x7F800000"), (float("-inf"), "0xFF800000"), (1e30, "1.0000000150474662e+30"),
])
def test_f32_literals_are_exact_f32_values(value, text):
    assert f32_literal(value) == text
    if "x" not in text:
        assert float(np.float32(float(text))) == float(np.float32(value))


def test_f64_literals_round_trip():
    for v in [0.1, 1e-8, 0.9, 123456789.123, 5e-324]:
        text = f64_literal(v)
        assert "." in text.split("e")[0] and float(text) == v


def test_attributes():
    assert attribute(True) == "true"
    assert attribute(3) == "3 : i64"
    assert attribute(0.5) == "0.5 : f64"
    assert attribute({"name": "sgd", "0.weight": {"lr": 0.1}}) == \
        '{name = "sgd", "0.weight" = {lr = 0.1 : f64}}'
    assert string_literal('a"b\\c\n') == '"a\\"b\\\\c\\0A"'


def test_dense_literals():
    assert dense_literal(np.full((2, 3), 1.5, np.float32)) == "dense<1.5>"
    assert dense_literal(np.array([1.0, 2.0], np.float32)) == 'dense<"0x0000803F00000040">'


def test_broadcast_maps_follow_torch():
    assert broadcast_map((3,), (2, 3)) == "affine_map<(d0, d1) -> (d1)>"
    assert broadcast_map((2, 1), (2, 3)) == "affine_map<(d0, d1) -> (d0, 0)>"
    assert broadcast_map((1, 1), (1, 3)) == "affine_map<(d0, d1) -> (d0, 0)>"
    assert broadcast_map((), (2, 3)) == "affine_map<(d0, d1) -> ()>"
    assert broadcast_map((4, 1, 3), (4, 2, 3)) == "affine_map<(d0, d1, d2) -> (d0, 0, d2)>"


@pytest.mark.parametrize("a,b,groups", [
    ((6,), (2, 3), [([0], [0, 1])]),
    ((2, 3), (3, 2), [([0, 1], [0, 1])]),
    ((2, 1, 3), (2, 3), [([0], [0]), ([1, 2], [1])]),
    ((5,), (5, 1), [([0], [0, 1])]),
    ((1, 5), (5,), [([0, 1], [0])]),
    ((4, 6), (4, 2, 3), [([0], [0]), ([1], [1, 2])]),
])
def test_reshape_groups(a, b, groups):
    assert _groups(a, b) == groups


@pytest.mark.parametrize("src,dst", [
    ((4, 6), (4, 2, 3)), ((2, 3, 4), (6, 4)), ((2, 3), (3, 2)), ((2, 3, 4), (4, 3, 2)),
    ((1, 1), ()), ((6,), (1, 6, 1)), ((2, 1, 3), (3, 2)),
])
def test_reshapes(src, dst):
    class Reshape(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(src))

        def forward(self, x):
            return (x * self.w).reshape(dst) + 1.0

    model, x = Reshape(), torch.randn(src)
    text = export_inference(model, x)
    verify(text)
    (got,) = mlir_exec.run(text, "forward", [model.w.detach().numpy(), x.numpy()])
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5)
