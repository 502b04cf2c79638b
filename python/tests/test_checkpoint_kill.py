"""wsc-run killed with SIGKILL at random instants resumes bitwise (issue 20).

Each case trains a small model for 30 steps with --checkpoint-every 1 twice:
once uninterrupted, once killed at random instants (at least 20 kills, the
run resumed with --resume after each). The killed run's checkpoints of every
step (weights, buffers, optimizer state, masks, mask schedule state, data
cursor, loss) and its final --save-weights file must equal the uninterrupted
run's byte for byte. Kill instants come from a seeded generator: some during a
run's startup (reading the checkpoint), the others at a random instant of
the step after the one a resumed run has just checkpointed, which spreads
the kills over the run (startup, steps and checkpoint writes alike).
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
# Large enough that a step (and its checkpoint) takes milliseconds, so that
# the test's reaction time is short against it; small enough for seconds.
IN, HIDDEN, BATCH = 128, 384, 32


def mlp():
    return nn.Sequential(nn.Linear(IN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 10))


def dropout_mlp():
    # Dropout draws from (seed, step): a resumed run must continue at its step.
    return nn.Sequential(nn.Linear(IN, HIDDEN), nn.ReLU(), nn.Dropout(0.2),
                         nn.Linear(HIDDEN, 10))


def batchnorm_mlp():
    return nn.Sequential(nn.Linear(IN, HIDDEN), nn.BatchNorm1d(HIDDEN), nn.ReLU(),
                         nn.Linear(HIDDEN, 10))


def sparse_mlp():
    return nn.Sequential(nn.Linear(IN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU(),
                         nn.Linear(HIDDEN, 10))


RIGL = {"schedule": "rigl", "params": "sparse", "sparsity": 0.8, "end_step": STEPS,
        "update_frequency": 3, "drop_fraction": 0.5}

CASES = {
    "sgd_momentum_dropout": dict(model=dropout_mlp, optimizer=lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
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
    data = [(torch.randn(BATCH, IN, generator=g), torch.randint(0, 10, (BATCH,), generator=g))
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


def wait_for_progress(proc, directory, done_before, deadline):
    """Polls until the run wrote a checkpoint past `done_before` steps (True)
    or it ended or `deadline` passed (False)."""
    while time.monotonic() < deadline and proc.poll() is None:
        if len(checkpoints(directory)) > done_before:
            return True
        time.sleep(0.0005)
    return False


def run_with_kills(command, cwd, directory, save, startup_s, step_s, rng):
    """Starts, kills and resumes the run until it finishes; returns the kills
    as (checkpoints before, after) the killed run. A third of the kills land
    at a random instant of the startup (reading and restoring the
    checkpoint), and all of them once only that can still give MIN_KILLS
    kills; the others at a random instant of the step (or checkpoint
    write) after the one the run has just finished, so that every run gets
    about one step done and the kills spread over the whole run."""
    kills = []
    for _ in range(400):
        before = len(checkpoints(cwd / directory))
        resume = ["--resume", directory] if before else []
        proc = subprocess.Popen(command + ["--checkpoint-dir", directory, "--save-weights", save]
                                + resume, cwd=cwd, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        # On a loaded machine a run may get several steps done before its
        # kill lands: once the steps left could not give MIN_KILLS, every
        # kill lands in the startup, before the run can finish a step.
        short = MIN_KILLS - len(kills) >= STEPS - before
        if short or rng.random() < 1 / 3:
            delay = rng.uniform(0, startup_s / 2 if short else startup_s)
        else:
            wait_for_progress(proc, cwd / directory, before, time.monotonic() + 60)
            delay = rng.uniform(0, step_s)
        try:
            _, err = proc.communicate(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            kills.append((before, len(checkpoints(cwd / directory))))
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
    step_s = max((full - one) / (STEPS - 1), 1e-4)

    rng = random.Random(f"wsc-kill-{name}")
    kills = run_with_kills(command, tmp_path, "killed", "killed.safetensors",
                           max(one - step_s, 1e-3), step_s, rng)
    print(f"{name}: step {step_s * 1e3:.1f} ms, {len(kills)} kills at checkpoint steps "
          f"{[k[0] for k in kills]}")
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
