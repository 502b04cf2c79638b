"""What a first run meets (issue 21, item 8): the demo's data is a task the
MLP learns, `wsc.export --batches` needs `--data`, and an unbuilt native
module says to run `make`."""
import importlib.util
import os
import shutil
import subprocess
import sys

import torch
from torch import nn

from wsc import safetensors

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _export(*args, cwd=REPO):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    return subprocess.run([sys.executable, "-m", "wsc.export", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


def _mlp_example():
    spec = importlib.util.spec_from_file_location("_mlp_example", os.path.join(REPO, "examples",
                                                                               "mlp.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_batches_without_data_is_an_error(tmp_path):
    proc = _export("examples/mlp.py", "-o", str(tmp_path / "m.mlir"), "--batches", "3")
    assert proc.returncode == 2
    assert "--batches says how many batches --data writes; pass --data PATH too" in proc.stderr
    assert not (tmp_path / "m.mlir").exists()


def test_demo_data_is_a_task_the_mlp_learns(tmp_path):
    data = tmp_path / "d.safetensors"
    proc = _export("examples/mlp.py", "-o", str(tmp_path / "m.mlir"), "--batch", "64",
                   "--data", str(data), "--batches", "4")
    assert proc.returncode == 0, proc.stderr
    batches = safetensors.load(str(data))
    inputs, labels = torch.from_numpy(batches["input0"]), torch.from_numpy(batches["label0"])
    assert inputs.shape == (4, 64, 784) and labels.shape == (4, 64)
    # Every batch, not only the example's, is drawn from the task: the class
    # centres classify them (random labels would score about 10%).
    example = _mlp_example()
    for b in range(4):
        nearest = torch.cdist(inputs[b], 0.5 * example._CENTRES).argmin(dim=1)
        assert (nearest == labels[b]).float().mean() > 0.9, b
    assert not torch.equal(inputs[1], inputs[0])
    # The demo's training, in PyTorch on the same batches: the loss falls.
    built = example.build(batch_size=64)
    model, loss_fn, opt = built.model, built.loss_fn, built.optimizer
    losses = []
    for step in range(20):
        opt.zero_grad()
        loss = loss_fn(model(inputs[step % 4]), labels[step % 4])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[0] > 2.2 and losses[-1] < 0.5 * losses[0], losses


def test_sample_of_the_wrong_shape_is_named(tmp_path):
    path = tmp_path / "example.py"
    path.write_text(
        "import torch\nfrom wsc.export import Example\n"
        "def build():\n"
        "    m = torch.nn.Linear(3, 2)\n"
        "    return Example(model=m, inputs=torch.randn(4, 3), loss_fn=torch.nn.MSELoss(),\n"
        "                   optimizer=torch.optim.SGD(m.parameters(), lr=0.1),\n"
        "                   targets=torch.randn(4, 2),\n"
        "                   sample=lambda g, n: (torch.randn(n, 5), torch.randn(n, 2)))\n")
    proc = _export(str(path), "-o", str(tmp_path / "m.mlir"), "--data",
                   str(tmp_path / "d.safetensors"), "--batches", "2")
    assert proc.returncode == 1
    assert "Example.sample returned input0 of shape (4, 5), not like the example's" in proc.stderr


def test_missing_native_module_says_run_make(tmp_path):
    # A copy of the package with no build tree beside it and none in WSC_BUILD_DIR.
    shutil.copytree(os.path.join(REPO, "python", "wsc"), tmp_path / "python" / "wsc",
                    ignore=shutil.ignore_patterns("__pycache__", "_runtime*"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "python"),
               WSC_BUILD_DIR=str(tmp_path / "no-build"))
    proc = subprocess.run(
        [sys.executable, "-c", "import wsc.sparse_schedule as s; s._native()"],
        env=env, capture_output=True, text=True)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: wsc's native module wsc._runtime is not built"), last
    assert "run `make` in the wsc repository, or set WSC_BUILD_DIR" in last
