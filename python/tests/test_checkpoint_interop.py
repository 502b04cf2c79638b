"""Program checkpoints and torch.optim interop (issue 20, docs/Checkpoints.md).

* PyTorch -> wsc -> PyTorch: 3 steps in PyTorch, load model and optimizer
  state into a compiled program, 3 steps on wsc, load its state back into
  PyTorch, 3 more steps: equal to 9 PyTorch steps (rtol 1e-5) for SGD with
  momentum, Adam and AdamW (amsgrad).
* optimizer_state_dict() has exactly torch's structure.
* Program.save / Program.load continue bit for bit; bad input (another
  program's checkpoint, a corrupt file, mismatched optimizer state) is a
  ValueError saying what is wrong.
"""
import copy
import json

import numpy as np
import pytest
import torch
from torch import nn

import wsc

OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-2, betas=(0.8, 0.95), weight_decay=1e-3),
    "adamw": lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1, amsgrad=True),
}


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))


def batches(n=9):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(6, 8, generator=g), torch.randn(6, 4, generator=g)) for _ in range(n)]


def torch_steps(m, opt, data):
    for x, y in data:
        opt.zero_grad()
        nn.functional.mse_loss(m(x), y).backward()
        opt.step()


def compile_fresh(make_opt, **options):
    m = model()
    return wsc.compile(m, nn.MSELoss(), make_opt(m.parameters()), batches(1)[0][0],
                       batches(1)[0][1], stream_dtype="f32", mode="weight_streaming", **options)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_pytorch_wsc_pytorch_round_trip_equals_nine_pytorch_steps(name):
    make_opt, data = OPTIMIZERS[name], batches()
    ref = model()
    ref_opt = make_opt(ref.parameters())
    torch_steps(ref, ref_opt, data)

    m = model()
    opt = make_opt(m.parameters())
    torch_steps(m, opt, data[:3])
    prog = compile_fresh(make_opt)
    prog.load_state_dict(m.state_dict(), opt.state_dict())
    for x, y in data[3:6]:
        prog.step(x, y)
    back = model()
    back_opt = make_opt(back.parameters())
    back.load_state_dict(prog.state_dict())
    back_opt.load_state_dict(prog.optimizer_state_dict())
    torch_steps(back, back_opt, data[6:])

    for k, v in ref.state_dict().items():
        torch.testing.assert_close(back.state_dict()[k], v, rtol=1e-5, atol=1e-6, msg=k)
    for i, state in ref_opt.state_dict()["state"].items():
        for key, value in state.items():
            if value is not None:
                torch.testing.assert_close(back_opt.state_dict()["state"][i][key], value,
                                           rtol=1e-5, atol=1e-6, msg=f"{i} {key}")


def same_structure(a, b, where="state_dict"):
    assert type(a) is type(b), f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} vs {list(b)}"
        for k in a:
            same_structure(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            same_structure(x, y, f"{where}[{i}]")
    elif isinstance(a, torch.Tensor):
        assert a.shape == b.shape and a.dtype == b.dtype, f"{where}: {a.shape} {a.dtype}"
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


@pytest.mark.parametrize("name", sorted(OPTIMIZERS) + ["sgd_plain"])
def test_optimizer_state_dict_has_torchs_structure(name):
    make_opt = (lambda p: torch.optim.SGD(p, lr=0.1)) if name == "sgd_plain" else OPTIMIZERS[name]
    prog = compile_fresh(make_opt)
    m = model()
    opt = make_opt(m.parameters())
    same_structure(prog.optimizer_state_dict(), opt.state_dict())  # before any step: no state
    data = batches(2)
    for x, y in data:
        prog.step(x, y)
    torch_steps(m, opt, data)
    ours, theirs = prog.optimizer_state_dict(), opt.state_dict()
    same_structure(ours, theirs)
    for i, state in theirs["state"].items():
        for key, value in state.items():
            if value is not None:
                torch.testing.assert_close(ours["state"][i][key], value, rtol=1e-5, atol=1e-6)


def test_save_and_load_continue_bitwise(tmp_path):
    data = batches(6)
    first = compile_fresh(OPTIMIZERS["adamw"])
    before = [first.step(x, y) for x, y in data[:3]]
    first.save(tmp_path / "c.safetensors")
    with open(tmp_path / "c.safetensors", "rb") as f:  # the header's __metadata__
        meta = json.loads(f.read(int.from_bytes(f.read(8), "little")))["__metadata__"]
    assert (meta["step"], float(meta["loss"])) == ("3", before[-1])
    losses = [first.step(x, y) for x, y in data[3:]]

    second = compile_fresh(OPTIMIZERS["adamw"])
    second.load(tmp_path / "c.safetensors")
    assert second._steps == 3
    assert [second.step(x, y) for x, y in data[3:]] == losses
    for k, v in first.state_dict().items():
        assert torch.equal(second.state_dict()[k], v), k
    same_structure(second.optimizer_state_dict(), first.optimizer_state_dict())
    for i, state in first.optimizer_state_dict()["state"].items():
        for key, value in state.items():
            assert torch.equal(second.optimizer_state_dict()["state"][i][key], value)


def test_load_refuses_another_program_and_corrupt_files(tmp_path):
    sgd = compile_fresh(OPTIMIZERS["sgd"])
    sgd.step(*batches(1)[0])
    path = tmp_path / "sgd.safetensors"
    sgd.save(path)
    adam = compile_fresh(OPTIMIZERS["adam"])
    with pytest.raises(ValueError, match=r"sgd.safetensors: the checkpoint is of a different "
                                         r"schedule \(fingerprint mismatch\):\n  optimizer: "
                                         r"checkpoint sgd lr=0.05 .*, schedule adam lr=0.01"):
        adam.load(path)
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    (tmp_path / "bad.safetensors").write_bytes(data)
    with pytest.raises(ValueError, match=r"bad.safetensors: corrupt checkpoint: the data of "
                                         r"tensor '.*' does not match its checksum"):
        sgd.load(tmp_path / "bad.safetensors")
    (tmp_path / "short.safetensors").write_bytes(bytes(data[:100]))
    with pytest.raises(ValueError, match=r"short.safetensors: truncated safetensors file"):
        sgd.load(tmp_path / "short.safetensors")


def test_load_state_dict_refuses_mismatched_optimizer_state():
    make_opt = OPTIMIZERS["adamw"]
    prog = compile_fresh(make_opt)
    m = model()
    opt = make_opt(m.parameters())
    torch_steps(m, opt, batches(1))
    good = opt.state_dict()

    def refused(edit, message):
        state = copy.deepcopy(good)
        edit(state)
        before = prog.state_dict()
        with pytest.raises(ValueError, match=message):
            prog.load_state_dict(m.state_dict(), state)
        for k, v in before.items():  # nothing changed
            assert torch.equal(prog.state_dict()[k], v)

    refused(lambda s: s["param_groups"][0].update(lr=0.5),
            r"param_groups\[0\]\['lr'\] is 0.5 but the program was compiled with 0.01")
    refused(lambda s: s["state"][1].pop("exp_avg_sq"),
            r"optimizer_state\['state'\]\[1\] \('0.bias'\) has no 'exp_avg_sq'")
    refused(lambda s: s["state"].pop(3),
            r"optimizer_state\['state'\] has no entry for parameter 3 \('2.bias'\)")
    refused(lambda s: s["state"][0].update(exp_avg=torch.zeros(3, 3)),
            r"optimizer_state\['state'\]\[0\]\['exp_avg'\] \('0.weight'\) has shape \[3, 3\], "
            r"expected \[16, 8\]")
    with pytest.raises(ValueError, match=r"model_state: missing keys \['2.bias'\]"):
        prog.load_state_dict({k: v for k, v in m.state_dict().items() if k != "2.bias"})
