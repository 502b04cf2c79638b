"""The real third-party files in ../shared/samples/torch-mlir (see its
README: a tpp-mlir MLP with splat weights, HEIR's MNIST MLP with weights as
arguments and a private ReLU helper, HEIR's LeNet-5 with dense_resource
weights) compile with wsc-opt --wsc-pipeline, translate, and run inference
in wsc-run; each output matches upstream MLIR's own execution of the same
file (mlir-opt's stock lowering, JIT-run by mlir-runner) at rtol 1e-4.

The files are read where they are, never copied into the project; the
tests skip only when that directory is absent.
"""
import subprocess
from pathlib import Path

import numpy as np
import pytest

from upstream_reference import run_function
from wsc import compiler, safetensors

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "samples" / "torch-mlir"

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"{SAMPLES} is absent")


def wsc_run(path, systems, inputs, weights, tmp_path):
    """The sample through the tools as docs/TorchMlirInput.md describes;
    `weights` are those the function takes as arguments (by wsc's names)."""
    def tool(name, *args):
        subprocess.run([compiler.tool_path(name), *map(str, args)], check=True,
                       capture_output=True, text=True)

    compiled, schedule = tmp_path / "model.wsc.mlir", tmp_path / "schedule.json"
    wfile, feed, out = (tmp_path / f"{n}.safetensors" for n in ("weights", "in", "out"))
    tool("wsc-opt", path, f"--wsc-pipeline=systems={systems} stream-dtype=f32", "-o", compiled)
    tool("wsc-translate", "--wsc-to-schedule", compiled, "-o", schedule)
    if weights:
        safetensors.save(weights, str(wfile))
    else:
        tool("wsc-translate", "--wsc-to-weights", compiled, "-o", wfile)
    safetensors.save({f"input{i}": x for i, x in enumerate(inputs)}, str(feed))
    tool("wsc-run", schedule, "--weights", wfile, "--inputs", feed, "--outputs", out)
    return safetensors.load(str(out))["output0"]


def check(got, want):
    # Zeros after a ReLU: an absolute floor far below the outputs' scale.
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6 * np.abs(want).max())


def test_tpp_mlp_with_splat_weights(tmp_path):
    """Batch 256 on two systems; the six splat constants are the weights."""
    path = SAMPLES / "mlp-3x1024-fp32.mlir"
    x = np.random.default_rng(0).standard_normal((256, 1024), dtype=np.float32)
    got = wsc_run(path, 2, [x], None, tmp_path)
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
    got = wsc_run(path, 1, [x], weights, tmp_path)
    want = run_function(path, "mnist", [*weights.values(), x])[0]
    check(got, want)


def test_heir_lenet5_with_resource_weights(tmp_path):
    path = SAMPLES / "lenet5.mlir"
    x = np.random.default_rng(2).standard_normal((1, 1, 32, 32), dtype=np.float32)
    got = wsc_run(path, 1, [x], None, tmp_path)
    check(got, run_function(path, "lenet", [x])[0])
