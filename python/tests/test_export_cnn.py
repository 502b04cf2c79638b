"""wsc.export of CNNs: buffers in the signature, the IR forms of conv / batch norm /
pooling, and the errors for what the exporter does not lower."""

import os
import re
import subprocess
import sys

import pytest
import torch
from torch import nn

from cnn_models import CASES, MaskedBuffers, ResNet
from mlir_check import signature, verify
from wsc import safetensors
from wsc.export import UnsupportedOpError, export_inference, export_training_step

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _train(model, x, y=None, loss_fn=None):
    y = torch.randint(0, 3, (x.shape[0],)) if y is None else y
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return export_training_step(model, loss_fn or nn.CrossEntropyLoss(), opt, x, y)


def _small():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Conv2d(4, 2, 3, stride=2, bias=False), nn.BatchNorm2d(2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2, 3))


_BUFFERS = ["1.running_mean", "1.running_var", "1.num_batches_tracked",
            "4.running_mean", "4.running_var", "4.num_batches_tracked"]


# ------------------------------------------------------------ the IR contract

# The ops the wsc runtime executes (docs/ExportedIR.md); generic bodies use arith/math.
_OPS = {"arith.constant", "tensor.empty", "tensor.pad", "tensor.expand_shape",
        "tensor.collapse_shape", "tensor.extract_slice", "tensor.insert_slice", "linalg.fill",
        "linalg.generic", "linalg.matmul", "linalg.batch_matmul", "linalg.transpose",
        "linalg.conv_2d_nchw_fchw", "linalg.pooling_nchw_max", "linalg.pooling_nchw_sum"}
_BODY_OPS = {"linalg.index", "linalg.yield", "tensor.yield"}


def _op(text):
    return re.match(r"\s*([a-z_]+\.[a-z_0-9]+)", text).group(1)


def _check_ir_contract(text):
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("%b.") or line.startswith(("linalg.yield", "tensor.yield")):
            op = _op(line.split("=", 1)[-1])
            assert op in _BODY_OPS or op.split(".")[0] in ("arith", "math"), line
        elif line.startswith("%"):
            op = _op(line.split("=", 1)[1])
            assert op in _OPS, line
            if op in ("tensor.extract_slice", "tensor.insert_slice"):
                assert line.count("%") == (2 if op == "tensor.extract_slice" else 3), \
                    f"dynamic offsets/sizes/strides: {line}"
            if op == "linalg.generic":
                maps = re.findall(r"affine_map<\(([^)]*)\) -> \(([^)]*)\)>", line)
                results = [r.strip() for r in maps[-1][1].split(",") if r.strip()]
                assert all(re.fullmatch(r"d\d+", r) for r in results), \
                    f"output map is not a projection: {line}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_cnn_training_export_verifies_and_uses_allowed_ops(case):
    torch.manual_seed(0)
    model, loss_fn, x, y = CASES[case]()
    text = _train(model, x, y, loss_fn)
    verify(text)
    _check_ir_contract(text)


def test_cnn_inference_export_uses_allowed_ops():
    torch.manual_seed(0)
    text = export_inference(ResNet().eval(), torch.randn(2, 3, 16, 16))
    verify(text)
    _check_ir_contract(text)


def test_cnn_op_forms():
    torch.manual_seed(0)
    model, loss_fn, x, y = CASES["resnet"]()
    text = _train(model, x, y, loss_fn)
    assert "tensor.pad" in text and "0xFF800000" in text  # max pooling pads with -inf
    assert "linalg.conv_2d_nchw_fchw" in text and "strides = dense<[2, 2]>" in text
    assert "linalg.pooling_nchw_max" in text
    assert "(d1, d0, 2 - d2, 2 - d3)" in text  # flipped, transposed 3x3 weight
    assert re.search(r"tensor.insert_slice .* \[1, 1, 2, 2\]", text)  # dilated gradient
    assert "gather" not in text and "scatter" not in text
    # Batch statistics divide by N*H*W = 4*16*16 (stem), never by a runtime count,
    # and the running variance is unbiased (n - 1).
    assert "arith.constant 1024.0 : f32" in text and "arith.constant 1023.0 : f32" in text


def test_avg_pool_op_forms():
    torch.manual_seed(0)
    model, loss_fn, x, y = CASES["avgpool_overlap_pad"]()
    text = _train(model, x, y, loss_fn)
    assert "linalg.pooling_nchw_sum" in text
    assert "dense<\"0x" in text  # count_include_pad=False: a table of divisors


# ------------------------------------------------------------ buffers


def test_buffer_arguments_and_updates():
    model = _small()
    text = _train(model, torch.randn(2, 3, 5, 5))
    verify(text)
    args, results = signature(text, "train_step")
    params = [k for k in model.state_dict() if k not in _BUFFERS]
    assert [a.get("wsc.param") for _, a in args[:len(params)]] == [f'"{k}"' for k in params]
    buffers = args[len(params):len(params) + len(_BUFFERS)]
    assert [a for _, a in buffers] == [{"wsc.buffer": f'"{k}"'} for k in _BUFFERS]
    assert [t for t, _ in buffers] == ["tensor<4xf32>", "tensor<4xf32>", "tensor<i64>",
                                       "tensor<2xf32>", "tensor<2xf32>", "tensor<i64>"]
    assert args[len(params) + len(_BUFFERS)][1] == {"wsc.input": "0 : i64"}
    assert results[0][1] == {"wsc.loss": ""}
    assert [a.get("wsc.grad") for _, a in results[1:1 + len(params)]] == \
        [f'"{k}"' for k in params]
    updates = results[1 + len(params):]
    assert [a for _, a in updates] == [{"wsc.buffer_update": f'"{k}"'} for k in _BUFFERS]
    assert [t for t, _ in updates] == [t for t, _ in buffers]


def test_read_only_and_non_persistent_buffers():
    text = _train(MaskedBuffers(), torch.randn(5, 4), torch.randint(0, 4, (5,)))
    verify(text)
    args, results = signature(text, "train_step")
    buffers = [(t, a["wsc.buffer"]) for t, a in args if "wsc.buffer" in a]
    # Persistent ones in state_dict order (a module's own before its children's),
    # then the non-persistent ones.
    assert buffers == [("tensor<4x4xi1>", '"mask"'), ("tensor<4xf32>", '"bn.running_mean"'),
                       ("tensor<4xf32>", '"bn.running_var"'),
                       ("tensor<i64>", '"bn.num_batches_tracked"'),
                       ("tensor<4xf32>", '"scale"')]
    updates = [a["wsc.buffer_update"] for _, a in results if "wsc.buffer_update" in a]
    assert updates == ['"bn.running_mean"', '"bn.running_var"', '"bn.num_batches_tracked"']


def test_inference_buffers_are_read_only_arguments():
    model = _small().eval()
    text = export_inference(model, torch.randn(2, 3, 5, 5))
    verify(text)
    args, results = signature(text, "forward")
    assert [a["wsc.buffer"] for _, a in args if "wsc.buffer" in a] == [f'"{k}"' for k in _BUFFERS]
    assert results == [("tensor<2x3xf32>", {"wsc.output": "0 : i64"})]


def test_inference_of_a_training_mode_batch_norm_is_an_error():
    with pytest.raises(ValueError, match=r"updates buffers \(1.running_mean, 1.running_var, "
                                         r"1.num_batches_tracked.*model.eval\(\)"):
        export_inference(_small(), torch.randn(2, 3, 5, 5))


def test_export_leaves_the_model_buffers_alone():
    model = _small()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    _train(model, torch.randn(2, 3, 5, 5))
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k


def test_cli_weights_include_buffers(tmp_path):
    example = tmp_path / "cnn.py"
    example.write_text(
        "import torch\nfrom torch import nn\nfrom wsc.export import Example\n"
        "def build():\n"
        "    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Flatten(),\n"
        "                      nn.Linear(4 * 4 * 4, 3))\n"
        "    m.register_buffer('extra', torch.ones(2), persistent=False)\n"
        "    return Example(model=m, inputs=torch.randn(2, 3, 6, 6),\n"
        "                   loss_fn=nn.CrossEntropyLoss(),\n"
        "                   optimizer=torch.optim.SGD(m.parameters(), lr=0.1),\n"
        "                   targets=torch.tensor([0, 2]))\n")
    weights = tmp_path / "w.safetensors"
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    proc = subprocess.run([sys.executable, "-m", "wsc.export", str(example), "-o",
                           str(tmp_path / "cnn.mlir"), "--weights", str(weights)],
                          cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    saved = safetensors.load(str(weights))
    assert list(saved) == ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean",
                           "1.running_var", "1.num_batches_tracked", "3.weight", "3.bias",
                           "extra"]
    assert saved["1.num_batches_tracked"].dtype == "int64"
    assert saved["1.running_var"].tolist() == [1.0] * 4


# ------------------------------------------------------------ unsupported


# Grouped, dilated, transposed and 1-D convolutions and uneven adaptive pooling
# are lowered (test_nn_layers.py); 3-D convolutions and adaptive max pooling are not.
@pytest.mark.parametrize("conv", [nn.Conv3d(1, 4, 3), nn.ConvTranspose3d(1, 4, 3)])
def test_unsupported_conv_variants_name_op_and_module(conv):
    model = nn.Sequential()
    model.add_module("features", nn.Sequential(nn.Conv2d(3, 4, 1), nn.ReLU(),
                                               nn.Unflatten(1, (1, 4)), conv))
    x = torch.randn(2, 3, 8, 8)
    width = model(x).flatten(1).shape[1]
    model.add_module("head", nn.Sequential(nn.Flatten(), nn.Linear(width, 3)))
    cls = type(conv).__name__
    message = (rf"aten.convolution.default \(from module 'features.3', {cls}\) is not "
               r"supported by the wsc exporter: 3-D convolution: only 1-D \(NCW\) and 2-D "
               r"\(NCHW\) are supported")
    with pytest.raises(UnsupportedOpError, match=message):
        _train(model, x)
    with pytest.raises(UnsupportedOpError, match=message):
        export_inference(model, x)


def test_adaptive_max_pooling_names_op_and_module():
    model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.AdaptiveMaxPool2d(4), nn.Flatten(),
                          nn.Linear(64, 3))
    with pytest.raises(UnsupportedOpError, match=r"aten.adaptive_max_pool2d.default \(from "
                                                 r"module '1', AdaptiveMaxPool2d\) is not "
                                                 r"supported by the wsc exporter"):
        _train(model, torch.randn(2, 3, 6, 6))


def test_max_pool_indices_cannot_be_used():
    class Unpool(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 1)
            self.pool = nn.MaxPool2d(2, return_indices=True)

        def forward(self, x):
            values, indices = self.pool(self.conv(x))
            return values.flatten(1) * indices.flatten(1)

    with pytest.raises(UnsupportedOpError, match="max-pool indices"):
        _train(Unpool(), torch.randn(2, 3, 4, 4), loss_fn=lambda out, y: out.sum())
