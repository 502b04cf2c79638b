"""Forward-only programs (export_inference) on the emulator against PyTorch:
an MLP, a GPT, a BERT-style encoder with a padding mask, a CNN and a ResNet
with BatchNorm, layer-pipelined on one system and weight-streaming on two
and three (uneven shards). Each runs as a user would: wsc-opt, wsc-translate
and `wsc-run --weights --inputs --outputs` on safetensors files."""
import json
import subprocess

import numpy as np
import pytest
import torch
from torch import nn

from wsc import compiler, safetensors
from wsc.export import export_inference
from cnn_models import ResNet, small_cnn
from transformer_models import BERT, GPT, padded_batches, token_batches


def infer(model, inputs, systems, tmp_path):
    """Returns (the schedule's mode, the outputs wsc-run wrote)."""
    def tool(name, *args):
        subprocess.run([compiler.tool_path(name), *map(str, args)], check=True,
                       capture_output=True, text=True)

    exported, compiled, schedule = (tmp_path / n for n in ("m.mlir", "m.wsc.mlir", "s.json"))
    weights, feed, out = (tmp_path / f"{n}.safetensors" for n in ("w", "in", "out"))
    exported.write_text(export_inference(model, inputs))
    tool("wsc-opt", exported, f"--wsc-pipeline=systems={systems} stream-dtype=f32", "-o", compiled)
    tool("wsc-translate", "--wsc-to-schedule", compiled, "-o", schedule)
    doc = json.loads(schedule.read_text())
    assert doc["kind"] == "inference"
    safetensors.save({k: v.detach().numpy() for k, v in model.state_dict().items()},
                     str(weights))
    safetensors.save({f"input{i}": t.numpy() for i, t in enumerate(inputs)}, str(feed))
    tool("wsc-run", schedule, "--weights", weights, "--inputs", feed, "--outputs", out)
    outputs = safetensors.load(str(out))
    return doc["mode"], [outputs[f"output{i}"] for i in range(len(outputs))]


def models():
    torch.manual_seed(0)
    (ids, _), = token_batches(1, 4, 16, 64)
    (tokens, valid), _ = padded_batches(1, 4, 16, 64, 3)[0]
    return {
        "mlp": (nn.Sequential(nn.Linear(5, 7), nn.GELU(), nn.Linear(7, 4), nn.Tanh()),
                (torch.randn(10, 5),)),
        "gpt": (GPT(layers=2, seq=16, vocab=64, d=32, heads=2), (ids,)),
        "bert": (BERT(vocab=64, d=32, heads=2, seq=16), (tokens, valid)),
        "cnn": (small_cnn(), (torch.randn(4, 3, 12, 12),)),
    }


@pytest.mark.parametrize("name", ["mlp", "gpt", "bert", "cnn"])
@pytest.mark.parametrize("systems, mode", [(1, "layer_pipelined"), (2, "weight_streaming"),
                                          (3, "weight_streaming")])
def test_inference_matches_pytorch(name, systems, mode, tmp_path):
    model, inputs = models()[name]
    model.eval()
    got_mode, (out,) = infer(model, inputs, systems, tmp_path)
    assert got_mode == mode
    with torch.no_grad():
        want = model(*inputs)
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("systems", [1, 2, 3])
def test_resnet_inference_reads_the_running_statistics(systems, tmp_path):
    """BatchNorm in eval mode normalizes by its buffers: MemoryX streams them
    like weights on several systems; one wafer keeps them resident
    (layer pipelined, as mode=auto picks for a model that fits)."""
    torch.manual_seed(0)
    model = ResNet().eval()
    for bn in (m for m in model.modules() if isinstance(m, nn.BatchNorm2d)):
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(5, 3, 16, 16)
    got_mode, (out,) = infer(model, (x,), systems, tmp_path)
    assert got_mode == ("layer_pipelined" if systems == 1 else "weight_streaming")
    with torch.no_grad():
        want = model(x)
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-4, atol=1e-5)
