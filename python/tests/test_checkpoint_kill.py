"""wsc-run killed with SIGKILL at random instants resumes bitwise (issue 20).

Each case trains a small model for 30 steps with --checkpoint-every 1 twice:
once uninterrupted, once killed at random instants (at least 20 kills, the
run resumed with --resume after each). The killed run's checkpoints of every
step (weights, buffers, optimizer state, masks, mask schedule state, data
cursor, loss) and its final --save-weights file must equal the uninterrupted
run's byte for byte. Kill instants come from a seeded generator; the window
adapts so that a resumed run gets about one step done before its kill, which
spreads the kills over the run (startup, steps and checkpoint writes alike).
"""
import json
import os
import random
import signal
import subprocess
import time

import numpy as np
import pytest
import torch
from torch import nn

import wsc
from wsc import compiler, safetensors
from wsc.sparse_schedule import RigL

STEPS = 30
BATCHES = 6  # step i takes batch i mod 6: the data cursor wraps
MIN_KILLS = 20


def mlp():
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))


def batchnorm_mlp():
    return nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 10))


def sparse_mlp():
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 10))


RIGL = {"schedule": "rigl", "params": "sparse", "sparsity": 0.8, "end_step": STEPS,
        "update_frequency": 3, "drop_fraction": 0.5}

CASES = {
    "sgd_momentum": dict(model=mlp, optimizer=lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
                         mode="weight_streaming", systems=1),
    "adamw_layer_pipelined": dict(
        model=mlp, optimizer=lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
        mode="layer_pipelined", systems=1),
    "batchnorm_2_systems": dict(
        model=batchnorm_mlp, optimizer=lambda p: torch.optim.Adam(p, lr=1e-2, amsgrad=True),
        mode="weight_streaming", systems=2),
    "rigl": dict(model=sparse_mlp,
                 optimizer=lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
                 mode="weight_streaming", systems=1, sparsity=RIGL),
}


def prepare(case, tmp_path):
    """Compiles the case's model; writes the schedule, weights, data and
    --sparsity file; returns the wsc-run command line without the
    checkpoint directory."""
    torch.manual_seed(0)
    model = case["model"]()
    weights = {k: v.detach().clone().numpy() for k, v in model.state_dict().items()}
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(16, 32, generator=g), torch.randint(0, 10, (16,), generator=g))
            for _ in range(BATCHES)]
    sparsity = None
    if "sparsity" in case:
        e = case["sparsity"]
        sparsity = RigL(e["sparsity"], end_step=e["end_step"],
                        update_frequency=e["update_frequency"], drop_fraction=e["drop_fraction"])
    prog = wsc.compile(model, nn.CrossEntropyLoss(), case["optimizer"](model.parameters()),
                       data[0][0], data[0][1], mode=case["mode"], systems=case["systems"],
                       sparsity=sparsity)
    (tmp_path / "s.json").write_text(json.dumps(prog.schedule))
    safetensors.save(weights, str(tmp_path / "w.safetensors"))
    names = [i["name"] for i in prog.schedule["inputs"]]
    safetensors.save({names[0]: torch.stack([x for x, _ in data]).numpy(),
                      names[1]: torch.stack([y for _, y in data]).numpy()},
                     str(tmp_path / "d.safetensors"))
    command = [os.path.abspath(compiler.tool_path("wsc-run")), "s.json", "--weights", "w.safetensors",
               "--data", "d.safetensors", "--steps", str(STEPS), "--quiet", "--threads", "1",
               "--checkpoint-every", "1"]
    if "sparsity" in case:
        (tmp_path / "sparsity.json").write_text(json.dumps({"schedules": [case["sparsity"]]}))
        command += ["--sparsity", "sparsity.json"]
    return command


def checkpoints(directory):
    if not os.path.isdir(directory):
        return []
    return sorted(n for n in os.listdir(directory) if n.startswith("step-")
                  and n.endswith(".safetensors"))


def run_to_end(command, cwd, directory, save):
    start = time.monotonic()
    subprocess.run(command + ["--checkpoint-dir", directory, "--save-weights", save],
                   cwd=cwd, check=True, capture_output=True, text=True)
    return time.monotonic() - start


def run_with_kills(command, cwd, directory, save, window, rng):
    """Starts, kills and resumes the run until it finishes; returns the kills
    (each with the newest checkpoint step before and after the killed run)."""
    kills = []
    for attempt in range(400):
        before = checkpoints(cwd / directory)
        resume = ["--resume", directory] if before else []
        proc = subprocess.Popen(command + ["--checkpoint-dir", directory, "--save-weights", save]
                                + resume, cwd=cwd, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        delay = rng.uniform(0.5 * window[0], 1.5 * window[0] + 2 * window[1])
        try:
            _, err = proc.communicate(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            after = checkpoints(cwd / directory)
            progress = len(after) - len(before)
            kills.append((len(before), len(after)))
            # Aim at about one step per killed run.
            if progress > 1:
                window[0] *= 0.85
            elif progress == 0 and len(kills) >= 2 and kills[-2][0] == kills[-2][1]:
                window[0] *= 1.2
            continue
        assert proc.returncode == 0, f"resumed run failed after {len(kills)} kills:\n{err}"
        return kills
    pytest.fail(f"the run did not finish in 400 attempts ({len(kills)} kills)")


def metadata(path):
    """A safetensors file's __metadata__."""
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        return json.loads(f.read(size))["__metadata__"]


def assert_same_file(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        assert fa.read() == fb.read(), f"{a} and {b} differ"


@pytest.mark.parametrize("name", sorted(CASES))
def test_sigkill_at_random_instants_resumes_bitwise(name, tmp_path):
    command = prepare(CASES[name], tmp_path)
    # Time one step and the startup, to place the kills.
    one = run_to_end([*command[:command.index("--steps")], "--steps", "1",
                      *command[command.index("--steps") + 2:]], tmp_path, "probe", "p.safetensors")
    full = run_to_end(command, tmp_path, "reference", "reference.safetensors")
    step_s = max((full - one) / (STEPS - 1), 1e-3)
    window = [max(one - step_s, 1e-3), step_s]

    rng = random.Random(f"wsc-kill-{name}")
    kills = run_with_kills(command, tmp_path, "killed", "killed.safetensors", window, rng)
    print(f"{name}: {len(kills)} kills at checkpoint steps {[k[0] for k in kills]}")
    assert len(kills) >= MIN_KILLS
    # Spread over the run, not bunched at its start or end.
    assert len({k[0] for k in kills}) >= 10

    names = checkpoints(tmp_path / "reference")
    assert len(names) == STEPS and checkpoints(tmp_path / "killed") == names
    for n in names:
        assert_same_file(tmp_path / "reference" / n, tmp_path / "killed" / n)
    assert_same_file(tmp_path / "reference.safetensors", tmp_path / "killed.safetensors")
    # The files compared hold what the issue asks for.
    last = safetensors.load(str(tmp_path / "killed" / names[-1]))
    meta = metadata(tmp_path / "killed" / names[-1])
    assert meta["step"] == str(STEPS) and "loss" in meta and "data_cursor" in meta
    assert any(k.startswith("optimizer.") for k in last)
    if "sparsity" in CASES[name]:
        assert "sparsity" in meta and any(k.startswith("mask.") for k in last)
    if name.startswith("batchnorm"):
        assert any(k.endswith("running_mean") for k in last)
