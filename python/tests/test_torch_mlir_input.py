"""Inference IR written in the styles of outside exporters, through the
command-line tools as docs/TorchMlirInput.md tells a user: wsc-opt
--wsc-pipeline, wsc-translate --wsc-to-schedule and --wsc-to-weights, wsc-run
--inputs/--outputs; the outputs against PyTorch eager at rtol 1e-4.

torch_mlir_inputs.py: torch-mlir's style (weights as dense_resource blobs,
dense constants and ml_program globals). exporter_style_inputs.py: a JAX
export (weights as arguments, private helpers), stripped splat weights, an
IREE/TF-style convolution (SSA pad amounts, linalg.copy), a program with no
parameter, and torch-mlir's integer index arithmetic with cf.assert checks,
which the last test makes fail at run time."""
import json
import subprocess

import numpy as np
import pytest
import torch

import exporter_style_inputs
import torch_mlir_inputs
from wsc import compiler, safetensors


def tool(name, *args):
    return subprocess.run([compiler.tool_path(name), *map(str, args)], check=True,
                          capture_output=True, text=True)


def compile_cli(text, systems, tmp_path, arg_weights=None):
    """Compiles `text`; returns (schedule path, weights path, compiled IR). The
    weights the function takes as arguments join the file --wsc-to-weights
    writes, as a user adds them."""
    source = tmp_path / "model.mlir"
    source.write_text(text)
    compiled, schedule = tmp_path / "model.wsc.mlir", tmp_path / "schedule.json"
    weights = tmp_path / "weights.safetensors"
    tool("wsc-opt", source, f"--wsc-pipeline=systems={systems} stream-dtype=f32", "-o", compiled)
    tool("wsc-translate", "--wsc-to-schedule", compiled, "-o", schedule)
    if arg_weights:  # no weight in the IR: the file is the user's alone
        safetensors.save(arg_weights, str(weights))
    else:
        tool("wsc-translate", "--wsc-to-weights", compiled, "-o", weights)
    return schedule, weights, compiled.read_text()


def run_cli(schedule, weights, inputs, tmp_path):
    """wsc-run on `inputs`; returns the first output."""
    feed, out = tmp_path / "in.safetensors", tmp_path / "out.safetensors"
    safetensors.save({f"input{i}": t.numpy() for i, t in enumerate(inputs)}, str(feed))
    tool("wsc-run", schedule, "--weights", weights, "--inputs", feed, "--outputs", out)
    return safetensors.load(str(out))["output0"]


def reference(model, inputs):
    model.eval()
    with torch.no_grad():
        return model(*inputs).numpy()


@pytest.mark.parametrize("systems", [1, 2])
@pytest.mark.parametrize("name", sorted(torch_mlir_inputs.MODELS))
def test_torch_mlir_input_matches_pytorch(name, systems, tmp_path):
    model, text, inputs = torch_mlir_inputs.MODELS[name]()
    schedule, weights, compiled = compile_cli(text, systems, tmp_path)
    got = run_cli(schedule, weights, inputs, tmp_path)
    np.testing.assert_allclose(got, reference(model, inputs), rtol=1e-4, atol=1e-5)
    # The large weights, and the globals, are MemoryX (or, on one wafer,
    # resident) parameters; the small ones stay constants.
    params = {p["name"] for p in json.loads(schedule.read_text())["params"]}
    assert params == PARAMS[name]
    assert "ml_program" not in compiled


PARAMS = {
    "mlp": {"torch_tensor_64_16_torch.float32", "fc2_weight"},
    "attention": {"torch_tensor_96_32_torch.float32", "proj_weight"},
    "resnet_block": {"torch_tensor_16_16_3_3_torch.float32", "conv2_weight"},
    "conv_pools": {"torch_tensor_16_16_3_3_torch.float32"},
    "adaptive_pool": set(),  # 108 elements: a constant
    # Argument weights by position; splats and hex constants as const<N>.
    "jax_mlp": {"arg0", "arg1", "arg2", "arg3"},
    "splat_mlp": {"const0", "const1", "const2"},
    "iree_conv": {"const0"},
    "no_parameter": set(),
    "hashed_embedding": {"const0"},
    "benchmark_harness": {"const0"},
}

# Kernels each model must form: one per parameter's layer, the stateless
# kernel for a program with no parameter.
KERNELS = {
    "jax_mlp": {"arg0.fwd", "arg1.fwd", "arg2.fwd", "arg3.fwd"},
    "splat_mlp": {"const0.fwd", "const1.fwd", "const2.fwd"},
    "iree_conv": {"const0.fwd"},
    "no_parameter": {"stateless.fwd"},
    "hashed_embedding": {"const0.fwd"},
    "benchmark_harness": {"const0.fwd"},
}


@pytest.mark.parametrize("systems", [1, 2])
@pytest.mark.parametrize("name", sorted(exporter_style_inputs.MODELS))
def test_exporter_style_matches_pytorch(name, systems, tmp_path):
    model, text, inputs, arg_weights = exporter_style_inputs.MODELS[name]()
    schedule, weights, compiled = compile_cli(text, systems, tmp_path, arg_weights)
    got = run_cli(schedule, weights, inputs, tmp_path)
    np.testing.assert_allclose(got, reference(model, inputs), rtol=1e-4, atol=1e-5)
    doc = json.loads(schedule.read_text())
    assert {p["name"] for p in doc["params"]} == PARAMS[name]
    assert {s["name"] for s in doc["steps"] if s["op"] == "kernel"} == KERNELS[name]
    assert "func.call" not in compiled and "tensor.pad" not in compiled


def test_out_of_range_id_is_rejected_at_run_time(tmp_path):
    """The embedding's cf.assert: an id whose `hi` row is past the table
    stops wsc-run with the assert's message, the kernel, the row index it
    computed and the element (in the global batch, on two systems)."""
    model, text, (ids,), _ = exporter_style_inputs.hashed_embedding()
    schedule, weights, _ = compile_cli(text, 2, tmp_path)
    ids = ids.clone()
    ids[3, 4] = 40  # floor(40 / 4) + 8 = 18 >= 16 rows
    with pytest.raises(subprocess.CalledProcessError) as failure:
        run_cli(schedule, weights, (ids,), tmp_path)
    assert ("kernel 'const0.fwd'" in failure.value.stderr and
            "cf.assert failed: 'index must be smaller than dim size' "
            "(value 18 read from operand 0[3, 4])" in failure.value.stderr), failure.value.stderr
