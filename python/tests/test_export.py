"""wsc.export: exported IR verifies, carries the wsc.* contract, rejects what it can't do."""

import os
import re
import subprocess
import sys
import time

import pytest
import torch
from torch import nn

import wsc.export as wexp
from wsc.export import UnsupportedOpError, export_inference, export_training_step

from export_models import CASES, OddMLP, mlp
from mlir_check import module_attributes, signature, verify

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _export(case, optimizer_cls=torch.optim.SGD, **opt_kwargs):
    torch.manual_seed(0)
    model, loss_fn, x, y = CASES[case]()
    opt = optimizer_cls(model.parameters(), **({"lr": 0.1} | opt_kwargs))
    return model, export_training_step(model, loss_fn, opt, x, y), x, y


# ------------------------------------------------------------ verification


@pytest.mark.parametrize("case", sorted(CASES))
def test_training_export_verifies(case):
    model, text, x, y = _export(case)
    verify(text)
    args, results = signature(text, "train_step")
    names = [k for k in model.state_dict()]
    params = args[:len(names)]
    assert [a["wsc.param"] for _, a in params] == [f'"{n}"' for n in names]
    for (ty, _), p in zip(params, model.state_dict().values()):
        assert ty == "tensor<" + "".join(f"{d}x" for d in p.shape) + "f32>"
    assert args[len(names)][1] == {"wsc.input": "0 : i64"}
    label = args[len(names) + 1][1]
    assert label["wsc.label"] == "0 : i64"
    if y.dtype == torch.int64:
        assert label["wsc.num_classes"] == f"{model(x).shape[-1]} : i64"
        assert args[-1][0] == f"tensor<{y.shape[0]}xi64>"
    else:
        assert "wsc.num_classes" not in label
    assert results[0] == ("tensor<f32>", {"wsc.loss": ""})
    assert [a["wsc.grad"] for _, a in results[1:]] == [f'"{n}"' for n in names]
    assert [t for t, _ in results[1:]] == [t for t, _ in params]


def test_odd_mlp_signature_exact():
    _, text, _, _ = _export("odd_mlp")
    args, results = signature(text, "train_step")
    assert [t for t, _ in args] == [
        "tensor<53x37xf32>", "tensor<53xf32>", "tensor<29x53xf32>", "tensor<29xf32>",
        "tensor<5x29xf32>", "tensor<5xf32>", "tensor<12x37xf32>", "tensor<12xi64>"]
    assert args[-1][1] == {"wsc.label": "0 : i64", "wsc.num_classes": "5 : i64",
                           "wsc.ignore_index": "-100 : i64"}
    assert len(results) == 7


def test_emitted_op_forms():
    _, text, _, _ = _export("odd_mlp")
    assert "linalg.matmul" in text and "linalg.transpose" in text
    assert "linalg.fill" in text and "tensor.empty" in text
    assert "linalg.index 1" in text  # one-hot of the labels
    assert "gather" not in text and "scatter" not in text
    assert "math.erf" in text  # exact GELU
    assert '"reduction"' in text
    # Only upstream dialects.
    ops = {line.split("=", 1)[1].split()[0] for line in text.splitlines()
           if " = " in line and line.strip().startswith("%")}
    assert {op.split(".")[0] for op in ops} <= {"linalg", "tensor", "arith", "math"}


def test_gelu_tanh_uses_tanh_not_erf():
    _, text, _, _ = _export("gelu_tanh")
    assert "math.tanh" in text and "math.erf" not in text


_GENERIC = re.compile(r"(%[\w.]+) = linalg.generic \{[^\n]*\} ins\(([^:]*) : [^\n]*\n"
                      r"(.*?)\n\s*\} -> (tensor<[^>]*>)", re.DOTALL)


def _generics(text):
    """{result: (operand names, body text, result type)} of every linalg.generic."""
    return {m[1]: (m[2].split(", "), m[3], m[4]) for m in _GENERIC.finditer(text)}


def test_cross_entropy_mean_divides_by_the_labels_kept():
    """Not by the batch size: by the count of labels other than ignore_index
    (-100), a sum over the batch (test_losses.py trains with it)."""
    _, text, _, _ = _export("odd_mlp")
    assert "arith.constant 12.0 : f32" not in text
    label = "%arg7"  # tensor<12xi64> {wsc.label = 0}
    generics = _generics(text)
    counts = [name for name, (ins, body, ty) in generics.items()
              if ins == [label] and ty == "tensor<f32>"
              and "arith.constant -100 : i64" in body and "arith.cmpi ne" in body]
    assert len(counts) == 1, counts
    ins, body, ty = generics[re.search(r"return (%[\w.]+),", text)[1]]  # the loss
    assert ty == "tensor<f32>" and ins[1] == counts[0] and "arith.divf %b.in0, %b.in1" in body


def test_export_is_deterministic():
    assert _export("odd_mlp")[1] == _export("odd_mlp")[1]


def test_tied_parameters_appear_once():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.b = nn.Linear(4, 4)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(torch.tanh(self.a(x)))

    model = Tied()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    text = export_training_step(model, nn.MSELoss(), opt, torch.randn(3, 4), torch.randn(3, 4))
    verify(text)
    args, results = signature(text, "train_step")
    assert [a["wsc.param"] for _, a in args[:3]] == ['"a.weight"', '"a.bias"', '"b.bias"']
    assert len(results) == 4


def test_multiple_inputs_and_targets():
    class TwoIn(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 3)
            self.b = nn.Linear(2, 3)

        def forward(self, x, z):
            return self.a(x) * torch.sigmoid(self.b(z))

    def loss_fn(out, y, w):
        return ((out - y) ** 2 * w).mean()

    model = TwoIn()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    text = export_training_step(model, loss_fn, opt, (torch.randn(5, 4), torch.randn(5, 2)),
                                (torch.randn(5, 3), torch.rand(5, 1)))
    verify(text)
    args, _ = signature(text, "train_step")
    assert [a for _, a in args[4:]] == [{"wsc.input": "0 : i64"}, {"wsc.input": "1 : i64"},
                                        {"wsc.label": "0 : i64"}, {"wsc.label": "1 : i64"}]


# ------------------------------------------------------------ optimizer


def test_sgd_attributes():
    _, text, _, _ = _export("relu_ce", torch.optim.SGD, lr=0.05, momentum=0.9, nesterov=True,
                            weight_decay=1e-4)
    attrs = module_attributes(text)
    assert attrs == ('wsc.optimizer = {name = "sgd", lr = 0.05 : f64, momentum = 0.9 : f64, '
                     'dampening = 0.0 : f64, weight_decay = 0.0001 : f64, nesterov = true}')


@pytest.mark.parametrize("cls,name", [(torch.optim.Adam, "adam"), (torch.optim.AdamW, "adamw")])
def test_adam_attributes(cls, name):
    _, text, _, _ = _export("relu_ce", cls, lr=1e-3, betas=(0.8, 0.95), eps=1e-7,
                            weight_decay=0.01, amsgrad=True)
    verify(text)
    assert module_attributes(text) == (
        f'wsc.optimizer = {{name = "{name}", lr = 0.001 : f64, beta1 = 0.8 : f64, '
        'beta2 = 0.95 : f64, eps = 1.0e-07 : f64, weight_decay = 0.01 : f64, amsgrad = true}')


def test_param_groups_overrides():
    torch.manual_seed(0)
    model = mlp([6, 8, 3])
    opt = torch.optim.SGD([{"params": model[0].parameters()},
                           {"params": [model[2].weight], "lr": 0.01, "weight_decay": 0.1},
                           {"params": [model[2].bias]}], lr=0.1, momentum=0.9)
    text = export_training_step(model, nn.CrossEntropyLoss(), opt, torch.randn(4, 6),
                                torch.randint(0, 3, (4,)))
    verify(text)
    attrs = module_attributes(text)
    assert 'wsc.optimizer = {name = "sgd", lr = 0.1 : f64, momentum = 0.9 : f64' in attrs
    assert attrs.endswith('wsc.param_groups = {"2.weight" = {lr = 0.01 : f64, '
                          'weight_decay = 0.1 : f64}}')


def test_identical_param_groups_need_no_overrides():
    model = mlp([6, 8, 3])
    opt = torch.optim.Adam([{"params": model[0].parameters()},
                            {"params": model[2].parameters()}], lr=0.1)
    text = export_training_step(model, nn.CrossEntropyLoss(), opt, torch.randn(4, 6),
                                torch.randint(0, 3, (4,)))
    assert "wsc.param_groups" not in text


# ------------------------------------------------------------ inference


def test_inference_export():
    torch.manual_seed(0)
    model = OddMLP()
    text = export_inference(model, torch.randn(12, 37))
    verify(text)
    assert text.startswith("module {") and "wsc.optimizer" not in text
    args, results = signature(text, "forward")
    assert [a.get("wsc.param") for _, a in args[:6]] == [f'"{k}"' for k in model.state_dict()]
    assert args[6] == ("tensor<12x37xf32>", {"wsc.input": "0 : i64"})
    assert results == [("tensor<12x5xf32>", {"wsc.output": "0 : i64"})]


def test_inference_multiple_outputs():
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)

        def forward(self, x, y):
            return self.a(x) + y, torch.softmax(self.a(y), dim=-1)

    text = export_inference(Two(), (torch.randn(3, 4), torch.randn(3, 4)))
    verify(text)
    _, results = signature(text, "forward")
    assert [a for _, a in results] == [{"wsc.output": "0 : i64"}, {"wsc.output": "1 : i64"}]


# ------------------------------------------------------------ unsupported ops


class LogCumSumExp(nn.Module):
    def forward(self, x):
        return torch.logcumsumexp(x, dim=1)


class Sort(nn.Module):
    def forward(self, x):
        return torch.sort(x, dim=1).values


class Encoder(nn.Module):
    def __init__(self, odd):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), odd, nn.Linear(4, 3))

    def forward(self, x):
        return self.encoder(x)


@pytest.mark.parametrize("odd,op,cls", [(LogCumSumExp(), "aten.logcumsumexp.default",
                                          "LogCumSumExp"),
                                        (Sort(), "aten.sort.default", "Sort")])
def test_unsupported_op_names_op_and_module(odd, op, cls):
    model = Encoder(odd)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(UnsupportedOpError) as info:
        export_training_step(model, nn.CrossEntropyLoss(), opt, torch.randn(2, 4),
                             torch.tensor([0, 2]))
    assert str(info.value).startswith(
        f"{op} (from module 'encoder.2', {cls}) is not supported by the wsc exporter")
    assert isinstance(info.value, NotImplementedError)
    with pytest.raises(UnsupportedOpError, match=f"{op} \\(from module 'encoder.2', {cls}\\)"):
        export_inference(model, torch.randn(2, 4))


class _LogCumSumExpBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return torch.logcumsumexp(grad, dim=1)


class OddBackward(nn.Module):
    def forward(self, x):
        return _LogCumSumExpBackward.apply(x)


def test_unsupported_backward_op_names_module():
    model = nn.Sequential(nn.Linear(4, 4), OddBackward(), nn.Linear(4, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(UnsupportedOpError,
                       match=r"aten.logcumsumexp.default \(from the backward of module '1', "
                             r"OddBackward\)"):
        export_training_step(model, nn.CrossEntropyLoss(), opt, torch.randn(2, 4),
                             torch.tensor([0, 2]))


def test_unsupported_op_in_loss_names_loss_function():
    def cumulative_loss(out, y):
        return torch.logcumsumexp(out, dim=1).pow(2).mean()

    model = mlp([4, 3])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(UnsupportedOpError, match=r"aten.logcumsumexp.default \(from the loss "
                                                 r"function, cumulative_loss\)"):
        export_training_step(model, cumulative_loss, opt, torch.randn(2, 4), torch.randn(2, 3))


def test_unsupported_op_in_root_module():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            return torch.logcumsumexp(self.fc(x), dim=1)

    with pytest.raises(UnsupportedOpError, match=r"\(from the top-level module, Net\)"):
        export_inference(Net(), torch.randn(2, 4))


def test_data_dependent_ops_are_unsupported():
    class Item(nn.Module):
        def forward(self, x):
            return x * x.sum().item()

    model = nn.Sequential(nn.Linear(4, 4), Item())
    with pytest.raises(UnsupportedOpError, match=r"\.item\(\).*module '1', Item"):
        export_inference(model, torch.randn(2, 4))


def test_dropout_becomes_a_random_draw_argument():
    """nn.Dropout(p) in training: a uniform draw u as the last argument
    {wsc.random = 0} and ``(u < 1 - p) / (1 - p) * x`` on it (docs/ExportedIR.md,
    "Random draws"); in eval mode no draw at all. p = 0.25 keeps 1 - p apart
    from p. Parity with eager given the same draws: test_dropout.py."""
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.25), nn.Linear(4, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(2, 4), torch.tensor([0, 2])
    text = export_training_step(model, nn.CrossEntropyLoss(), opt, x, y)
    verify(text)
    args, _ = signature(text, "train_step")
    assert args[-1] == ("tensor<2x4xf32>", {"wsc.random": "0 : i64"})
    assert sum("wsc.random" in a for _, a in args) == 1
    draw = f"%arg{len(args) - 1}"
    readers = [(ins, body, ty) for ins, body, ty in _generics(text).values() if draw in ins]
    assert len(readers) == 1  # the draw feeds only the mask
    ins, body, ty = readers[0]
    assert ty == "tensor<2x4xi1>"
    assert "arith.constant 0.75 : f32" in body and "arith.cmpf olt, %b.in0, %b.0" in body
    assert "arith.constant 0.75 : f32" in text.split(body, 1)[1]  # the 1 / (1 - p) scaling
    model.eval()
    inference = export_inference(model, x)
    assert "wsc.random" not in inference and "arith.cmpf" not in inference


@pytest.mark.parametrize("loss_fn,target,match", [
    (nn.MultiLabelMarginLoss(), torch.tensor([[0, 2, -1], [1, -1, 0]]),
     r"aten.multilabel_margin_loss_forward.default \(from the loss function, "
     r"MultiLabelMarginLoss\) is not supported"),
    (nn.MultiMarginLoss(), torch.tensor([0, 2]), r"aten.multi_margin_loss.default \(from the "
                                                  r"loss function, MultiMarginLoss\)"),
])
def test_losses_without_lowering_name_the_op_and_the_loss(loss_fn, target, match):
    """The stock losses wsc supports, with their options, are in test_losses.py."""
    model = nn.Sequential(mlp([4, 3]), nn.Sigmoid())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(UnsupportedOpError, match=match):
        export_training_step(model, loss_fn, opt, torch.randn(2, 4), target)


# ------------------------------------------------------------ bad arguments


def _args(model=None):
    model = model or mlp([4, 5, 3])
    return model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1), \
        torch.randn(2, 4), torch.tensor([0, 2])


def test_rejects_maximize():
    model, loss, _, x, y = _args()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, maximize=True)
    with pytest.raises(ValueError, match="maximize"):
        export_training_step(model, loss, opt, x, y)


def test_rejects_other_optimizers():
    model, loss, _, x, y = _args()
    with pytest.raises(TypeError, match="unsupported optimizer RMSprop"):
        export_training_step(model, loss, torch.optim.RMSprop(model.parameters()), x, y)


def test_rejects_foreign_parameters():
    model, loss, _, x, y = _args()
    other = mlp([4, 3])
    opt = torch.optim.SGD(list(model.parameters()) + list(other.parameters()), lr=0.1)
    with pytest.raises(ValueError, match="not a parameter of the model"):
        export_training_step(model, loss, opt, x, y)


def test_rejects_parameters_missing_from_optimizer():
    model, loss, _, x, y = _args()
    opt = torch.optim.SGD(model[0].parameters(), lr=0.1)
    with pytest.raises(ValueError, match="not handled by the optimizer: 2.weight, 2.bias"):
        export_training_step(model, loss, opt, x, y)


def test_rejects_optimizer_with_state():
    model, loss, opt, x, y = _args()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss(model(x), y).backward()
    opt.step()
    with pytest.raises(ValueError, match="already has state"):
        export_training_step(model, loss, opt, x, y)


def test_rejects_buffers_of_unsupported_dtype():
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 3))
    model[1].register_buffer("scale", torch.ones(4, dtype=torch.float64))
    _, loss, _, x, y = _args()
    with pytest.raises(TypeError, match="buffer '1.scale' has dtype float64"):
        export_training_step(model, loss, torch.optim.SGD(model.parameters(), lr=0.1), x, y)


def test_rejects_frozen_parameters():
    model, loss, opt, x, y = _args()
    model[0].bias.requires_grad_(False)
    with pytest.raises(ValueError, match="'0.bias' has requires_grad=False"):
        export_training_step(model, loss, opt, x, y)


@pytest.mark.parametrize("inputs,error,match", [
    (torch.randn(2, 4, dtype=torch.float64), TypeError, "example_inputs\\[0\\] has dtype float64"),
    (torch.ones(2, 4, dtype=torch.int32), TypeError, "example_inputs\\[0\\] has dtype int32"),
    ([[1.0, 2.0]], TypeError, "must be a tensor or a non-empty tuple of tensors"),
    (torch.tensor(1.0), ValueError, "batch dimension"),
])
def test_rejects_bad_inputs(inputs, error, match):
    model, loss, opt, _, y = _args()
    with pytest.raises(error, match=match):
        export_training_step(model, loss, opt, inputs, y)


def test_rejects_bad_targets():
    model, loss, opt, x, _ = _args()
    with pytest.raises(TypeError, match="example_targets\\[0\\] has dtype int32"):
        export_training_step(model, loss, opt, x, torch.tensor([0, 2], dtype=torch.int32))


def test_rejects_non_scalar_loss():
    model, _, opt, x, y = _args()
    with pytest.raises(ValueError, match="scalar float32"):
        export_training_step(model, nn.CrossEntropyLoss(reduction="none"), opt, x, y)


def test_rejects_unused_parameters():
    class Unused(nn.Module):
        def __init__(self):
            super().__init__()
            self.used = nn.Linear(4, 3)
            self.unused = nn.Linear(4, 3)

        def forward(self, x):
            return self.used(x)

    model = Unused()
    _, loss, _, x, y = _args()
    with pytest.raises(ValueError, match="do not affect the loss: unused.weight, unused.bias"):
        export_training_step(model, loss, torch.optim.SGD(model.parameters(), lr=0.1), x, y)


def test_rejects_non_module():
    with pytest.raises(TypeError, match="torch.nn.Module"):
        export_inference(lambda x: x, torch.randn(2, 4))


# ------------------------------------------------------------ speed


def test_export_of_4x1024_mlp_is_fast():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.GELU(),
                          nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = torch.randn(256, 784), torch.randint(0, 10, (256,))
    export_training_step(model, nn.CrossEntropyLoss(), opt, x, y)  # warm up lazy imports
    start = time.perf_counter()
    text = export_training_step(model, nn.CrossEntropyLoss(), opt, x, y)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"export took {elapsed:.2f}s"
    assert len(text) < 100_000  # no dense constants


# ------------------------------------------------------------ CLI


def _cli(*args, cwd=REPO):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    return subprocess.run([sys.executable, "-m", "wsc.export", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


def test_cli_exports_example(tmp_path):
    out = tmp_path / "mlp.mlir"
    proc = _cli("examples/mlp.py", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    verify(text)
    args, results = signature(text, "train_step")
    assert args[0] == ("tensor<1024x784xf32>", {"wsc.param": '"fc1.weight"'})
    assert args[-2][0] == "tensor<256x784xf32>"
    assert args[-1] == ("tensor<256xi64>", {"wsc.label": "0 : i64", "wsc.num_classes": "10 : i64",
                                            "wsc.ignore_index": "-100 : i64"})
    assert len(results) == 9
    assert 'name = "sgd", lr = 0.05 : f64, momentum = 0.9 : f64' in text


def test_cli_inference_and_batch(tmp_path):
    out = tmp_path / "mlp.mlir"
    proc = _cli("examples/mlp.py", "-o", str(out), "--inference", "--batch", "8")
    assert proc.returncode == 0, proc.stderr
    args, results = signature(out.read_text(), "forward")
    assert args[-1] == ("tensor<8x784xf32>", {"wsc.input": "0 : i64"})
    assert results == [("tensor<8x10xf32>", {"wsc.output": "0 : i64"})]


def test_cli_batch_without_build_parameter(tmp_path):
    example = tmp_path / "tiny.py"
    example.write_text(
        "import torch\nfrom wsc.export import Example\n"
        "def build():\n"
        "    m = torch.nn.Linear(3, 2)\n"
        "    return Example(model=m, inputs=torch.randn(4, 3), loss_fn=torch.nn.MSELoss(),\n"
        "                   optimizer=torch.optim.SGD(m.parameters(), lr=0.1),\n"
        "                   targets=torch.randn(4, 2))\n")
    proc = _cli(str(example), "--batch", "6")
    assert proc.returncode == 0, proc.stderr
    args, _ = signature(proc.stdout, "train_step")
    assert [t for t, _ in args[2:]] == ["tensor<6x3xf32>", "tensor<6x2xf32>"]


@pytest.mark.parametrize("content,message", [
    (None, "no such file"),
    ("x = 1\n", "does not define build()"),
    ("def build():\n    return 3\n", "must return wsc.export.Example"),
    ("import torch\nfrom wsc.export import Example\n"
     "class C(torch.nn.Module):\n"
     "    def forward(self, x):\n        return torch.logcumsumexp(x, 1)\n"
     "def build():\n"
     "    m = torch.nn.Sequential(torch.nn.Linear(3, 3), C())\n"
     "    return Example(model=m, inputs=torch.randn(4, 3))\n",
     "aten.logcumsumexp.default (from module '1', C) is not supported"),
])
def test_cli_errors(tmp_path, content, message):
    path = tmp_path / "example.py"
    if content is not None:
        path.write_text(content)
    proc = _cli(str(path), "--inference")
    assert proc.returncode == 1
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_cli_training_needs_loss_and_optimizer(tmp_path):
    path = tmp_path / "example.py"
    path.write_text("import torch\nfrom wsc.export import Example\n"
                    "def build():\n"
                    "    return Example(model=torch.nn.Linear(3, 2), inputs=torch.randn(4, 3))\n")
    proc = _cli(str(path))
    assert proc.returncode == 1
    assert "Example.loss_fn, Example.optimizer, Example.targets" in proc.stderr


def test_example_dataclass_is_public():
    ex = wexp.Example(model=nn.Linear(2, 2), inputs=torch.randn(1, 2))
    assert ex.loss_fn is None and ex.optimizer is None and ex.targets is None
