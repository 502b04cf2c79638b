"""torch-mlir-style inference IR (torch_mlir_inputs.py: weights as dense_resource
blobs, dense constants and ml_program globals) through the command-line tools,
as docs/TorchMlirInput.md tells a user: wsc-opt --wsc-pipeline, wsc-translate
--wsc-to-schedule and --wsc-to-weights, wsc-run --inputs/--outputs; the
outputs against PyTorch eager."""
import json
import subprocess

import numpy as np
import pytest
import torch

from wsc import _tools, safetensors
from torch_mlir_inputs import MODELS


def run_cli(text, inputs, systems, tmp_path):
    """Compiles `text` and runs it on `inputs`; returns (schedule, compiled IR, output)."""
    source = tmp_path / "model.mlir"
    source.write_text(text)

    def tool(name, *args):
        subprocess.run([_tools.tool_path(name), *map(str, args)], check=True,
                       capture_output=True, text=True)

    compiled, schedule = tmp_path / "model.wsc.mlir", tmp_path / "schedule.json"
    weights, feed, out = (tmp_path / f"{n}.safetensors" for n in ("weights", "in", "out"))
    tool("wsc-opt", source, f"--wsc-pipeline=systems={systems} stream-dtype=f32", "-o", compiled)
    tool("wsc-translate", "--wsc-to-schedule", compiled, "-o", schedule)
    tool("wsc-translate", "--wsc-to-weights", compiled, "-o", weights)
    safetensors.save({f"input{i}": t.numpy() for i, t in enumerate(inputs)}, str(feed))
    tool("wsc-run", schedule, "--weights", weights, "--inputs", feed, "--outputs", out)
    return (json.loads(schedule.read_text()), compiled.read_text(),
            safetensors.load(str(out))["output0"])



@pytest.mark.parametrize("systems", [1, 2])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_torch_mlir_input_matches_pytorch(name, systems, tmp_path):
    model, text, inputs = MODELS[name]()
    schedule, compiled, got = run_cli(text, inputs, systems, tmp_path)
    model.eval()
    with torch.no_grad():
        want = model(*inputs).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # The large weights, and the globals, are MemoryX (or, on one wafer,
    # resident) parameters; the small ones stay constants.
    assert {p["name"] for p in schedule["params"]} == PARAMS[name]
    assert "ml_program" not in compiled


PARAMS = {
    "mlp": {"torch_tensor_64_16_torch.float32", "fc2_weight"},
    "attention": {"torch_tensor_96_32_torch.float32", "proj_weight"},
    "resnet_block": {"torch_tensor_16_16_3_3_torch.float32", "conv2_weight"},
    "conv_pools": {"torch_tensor_16_16_3_3_torch.float32"},
}
