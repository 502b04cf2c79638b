"""Forward-only programs (export_inference) on the emulator against PyTorch:
an MLP, a GPT, a BERT-style encoder with a padding mask and a CNN, layer-
pipelined on one system and weight-streaming on two and three (uneven
shards)."""
import json

import numpy as np
import pytest
import torch
from torch import nn

import wsc
import wsc._runtime  # noqa: F401  (fails loudly when the binding is not built)
from wsc import _tools
from wsc.export import export_inference
from cnn_models import ResNet, small_cnn
from transformer_models import BERT, GPT, padded_batches, token_batches


def infer(model, inputs, systems):
    compiled, _ = _tools.run_tool(
        "wsc-opt", [f"--wsc-pipeline=systems={systems} stream-dtype=f32", "-"],
        export_inference(model, inputs))
    schedule, _ = _tools.run_tool("wsc-translate", ["--wsc-to-schedule", "-"], compiled)
    assert json.loads(schedule)["kind"] == "inference"
    session = wsc._runtime.Session(schedule)
    session.load_weights({k: v.detach().numpy() for k, v in model.state_dict().items()})
    arrays = [t.numpy() for t in inputs]
    return session.mode, session.infer(arrays)


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
def test_inference_matches_pytorch(name, systems, mode):
    model, inputs = models()[name]
    model.eval()
    got_mode, (out,) = infer(model, inputs, systems)
    assert got_mode == mode
    with torch.no_grad():
        want = model(*inputs)
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("systems", [1, 2, 3])
def test_resnet_inference_reads_the_running_statistics(systems):
    """BatchNorm in eval mode normalizes by its buffers, which MemoryX streams
    like weights (so even one system runs weight streaming)."""
    torch.manual_seed(0)
    model = ResNet().eval()
    for bn in (m for m in model.modules() if isinstance(m, nn.BatchNorm2d)):
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(5, 3, 16, 16)
    got_mode, (out,) = infer(model, (x,), systems)
    assert got_mode == "weight_streaming"
    with torch.no_grad():
        want = model(x)
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-4, atol=1e-5)
