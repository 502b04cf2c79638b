"""The real third-party files in ../shared/samples/torch-mlir (see its
README: a tpp-mlir MLP with splat weights, HEIR's MNIST MLP with weights as
arguments and a private ReLU helper, HEIR's LeNet-5 with dense_resource
weights) compile with wsc-opt --wsc-pipeline, translate, and run inference
in wsc-run; each output matches upstream MLIR's own execution of the same
file (mlir-opt's stock lowering, JIT-run by mlir-runner) at rtol 1e-4.

The files are read where they are, never copied into the project; the
tests skip only when that directory is absent.
"""
import os
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

import mlir_exec
from wsc import compiler, safetensors

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "samples" / "torch-mlir"

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"{SAMPLES} is absent")


def inline_resources(text):
    """The module with its dense_resource blobs written as hex `dense`
    attributes (the first four blob bytes are the alignment), so that a
    generated @main can close the module."""
    blobs = dict(re.findall(r'([\w.]+): "0x([0-9A-Fa-f]+)"', text.split("{-#", 1)[1])) \
        if "{-#" in text else {}
    module = text.split("{-#", 1)[0].rstrip()
    return re.sub(r"dense_resource\s*<([\w.]+)>",
                  lambda m: f'dense<"0x{blobs[m.group(1)][8:]}">', module)


def upstream_run(text, func, args):
    """Calls @func of `text` on `args` with mlir-opt + mlir-runner (the
    pipeline of mlir_exec.py); returns its one result."""
    header = re.search(rf"func\.func (?:public )?@{func}\((.*)", text).group(1)
    result = re.search(r"\)\s*->\s*\(?\s*(tensor<[^>]*>)", header).group(1)
    lines = ["  func.func private @printMemrefF32(memref<*xf32>)", "  func.func @main() {"]
    lines += [f"    %a{i} = arith.constant {mlir_exec._dense(a)}" for i, a in enumerate(args)]
    types = ", ".join(mlir_exec._type(a) for a in args)
    names = ", ".join(f"%a{i}" for i in range(len(args)))
    memref = result.replace("tensor<", "memref<")
    lines += [f"    %r = func.call @{func}({names}) : ({types}) -> {result}",
              f"    %m = bufferization.to_buffer %r : {result} to {memref}",
              f"    %u = memref.cast %m : {memref} to memref<*xf32>",
              "    func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()",
              "    return", "  }"]
    module = inline_resources(text)
    assert module.endswith("}")
    program = module[:-1] + "\n".join(lines) + "\n}\n"
    with tempfile.TemporaryDirectory() as tmp:
        src, low = os.path.join(tmp, "in.mlir"), os.path.join(tmp, "low.mlir")
        Path(src).write_text(program)
        mlir_exec._call([mlir_exec.MLIR_OPT, src, *mlir_exec.PIPELINE, "-o", low])
        out = mlir_exec._call([mlir_exec.MLIR_RUNNER, low, "-e", "main",
                               "-entry-point-result=void",
                               "-shared-libs=" + ",".join(mlir_exec.RUNTIME_LIBS)])
    return mlir_exec._parse(out)[0]


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
    check(got, upstream_run(path.read_text(), "forward", [x]))


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
    want = upstream_run(path.read_text(), "mnist", [*weights.values(), x])
    check(got, want)


def test_heir_lenet5_with_resource_weights(tmp_path):
    path = SAMPLES / "lenet5.mlir"
    x = np.random.default_rng(2).standard_normal((1, 1, 32, 32), dtype=np.float32)
    got = wsc_run(path, 1, [x], None, tmp_path)
    check(got, upstream_run(path.read_text(), "lenet", [x]))
