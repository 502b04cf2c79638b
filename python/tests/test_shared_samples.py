"""The real third-party files in ../shared/samples/torch-mlir (see its
README: a tpp-mlir MLP with splat weights, HEIR's MNIST MLP with weights as
arguments and a private ReLU helper, HEIR's LeNet-5 with dense_resource
weights) compile with wsc-opt --wsc-pipeline, translate, and run inference
in wsc-run; each output matches upstream MLIR's own execution of the same
file (mlir-opt's stock lowering, JIT-run by mlir-runner) at rtol 1e-4.

The files are read where they are, never copied into the project; the
tests skip only when that directory is absent.
"""
from pathlib import Path

import numpy as np
import pytest

from upstream_reference import check, run_function, wsc_run

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "samples" / "torch-mlir"

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"{SAMPLES} is absent")


def test_tpp_mlp_with_splat_weights(tmp_path):
    """Batch 256 on two systems; the six splat constants are the weights."""
    path = SAMPLES / "mlp-3x1024-fp32.mlir"
    x = np.random.default_rng(0).standard_normal((256, 1024), dtype=np.float32)
    got = wsc_run(path, 2, [x], {}, tmp_path)[0]
    check(got, run_function(path, "forward", [x])[0])


def test_heir_mnist_with_argument_weights(tmp_path):
    """@mnist's four weight arguments come from the weights file as arg0..3;
    its private @relu is inlined."""
    path = SAMPLES / "mnist-mlp.mlir"
    rng = np.random.default_rng(1)
    weights = {"arg0": rng.standard_normal((512, 784), dtype=np.float32) * 0.05,
               "arg1": rng.standard_normal(512, dtype=np.float32) * 0.1,
               "arg2": rng.standard_normal((10, 512), dtype=np.float32) * 0.05,
               "arg3": rng.standard_normal(10, dtype=np.float32) * 0.1}
    x = rng.standard_normal((1, 784), dtype=np.float32)
    got = wsc_run(path, 1, [x], weights, tmp_path)[0]
    want = run_function(path, "mnist", [*weights.values(), x])[0]
    check(got, want)


def test_heir_lenet5_with_resource_weights(tmp_path):
    path = SAMPLES / "lenet5.mlir"
    x = np.random.default_rng(2).standard_normal((1, 1, 32, 32), dtype=np.float32)
    got = wsc_run(path, 1, [x], {}, tmp_path)[0]
    check(got, run_function(path, "lenet", [x])[0])
