"""Faults under `mpirun -np R wsc-run` (issue 19): a rank killed mid-run or
hung ends the whole job within 30 s, non-zero, naming the rank, and leaves
no weights file; ranks that hold different schedules or weights, and more
ranks than systems, are clear errors before any step."""
import json
import signal
import subprocess
import time

import pytest
import torch
from torch import nn

import wsc
from mpi_runs import LAUNCHER, start, wait_for_ranks, wsc_run


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small MLP for 4 systems, saved for wsc-run with one batch (wsc-run
    cycles it for as many steps as asked)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
    x, y = torch.randn(8, 64), torch.randint(0, 10, (8,))
    prog = wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                       x, y, systems=4, mode="weight_streaming")
    return prog, prog.save_for_run(tmp_path_factory.mktemp("mlp"), [(x, y)])


def finish(job, limit):
    """Waits for the job at most `limit` seconds; (seconds taken, output)."""
    begin = time.monotonic()
    try:
        out, err = job.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        job.kill()
        job.communicate()
        raise AssertionError(f"the job did not end within {limit} s")
    return time.monotonic() - begin, out + err


def steps_running(job):
    """Reads rank 0's step lines until the second: the job is mid-run."""
    for line in job.stdout:
        if line.startswith("step 1 "):
            return
    raise AssertionError("the job ended before its second step")


@pytest.mark.parametrize("victim", [1, 0])
def test_a_killed_rank_ends_the_job_within_30_s(saved, tmp_path, victim):
    _, paths = saved
    job, _ = start(paths, tmp_path, 2, ["--steps", "1000000"])
    pids = wait_for_ranks(job, 2)
    steps_running(job)
    subprocess.run(["kill", "-KILL", str(pids[victim])], check=True)
    seconds, output = finish(job, 30)
    assert job.returncode != 0
    assert f"rank {victim}" in output, output
    # No weights, whole or partial, from a run that did not finish.
    assert not list(tmp_path.glob("weights.safetensors*"))


def test_a_hung_rank_ends_the_job_at_the_rank_timeout(saved, tmp_path):
    """mpirun notices a dead rank, not a stopped one: the other ranks' own
    deadline on every MPI wait ends the job and names the rank."""
    _, paths = saved
    job, _ = start(paths, tmp_path, 2, ["--steps", "1000000", "--rank-timeout", "3"])
    pids = wait_for_ranks(job, 2)
    steps_running(job)
    subprocess.run(["kill", "-STOP", str(pids[1])], check=True)
    try:
        seconds, output = finish(job, 30)
    finally:
        subprocess.run(["kill", "-CONT", str(pids[1])], capture_output=True)
    assert job.returncode != 0
    assert "wsc-run: rank 0: no answer from rank 1 in" in output, output
    assert "rank 1 died or hangs" in output
    assert not list(tmp_path.glob("weights.safetensors*"))


def mpmd(paths_a, paths_b, tmp_path):
    """Two ranks, each with its own files (mpirun's `A : B` form)."""
    def rank(paths):
        return ["-np", "1", wsc_run(), paths["schedule"], "--weights", paths["weights"],
                "--data", paths["data"], "--threads", "1"]
    return subprocess.run([str(LAUNCHER), *rank(paths_a), ":", *rank(paths_b)],
                          capture_output=True, text=True, timeout=120)


def test_ranks_with_different_schedules_are_an_error(saved, tmp_path):
    prog, paths = saved
    other = dict(paths, schedule=str(tmp_path / "other.json"))
    schedule = dict(prog.schedule, function=prog.schedule["function"] + "_changed")
    (tmp_path / "other.json").write_text(json.dumps(schedule))
    proc = mpmd(paths, other, tmp_path)
    assert proc.returncode != 0
    assert (f"the schedule '{paths['schedule']}' differs between rank 0 and rank 1: every "
            "rank must run the same schedule and weights") in proc.stderr, proc.stderr
    assert "step 0" not in proc.stdout


def test_ranks_with_different_weights_are_an_error(saved, tmp_path):
    _, paths = saved
    other = dict(paths, weights=str(tmp_path / "w.safetensors"))
    data = bytearray(open(paths["weights"], "rb").read())
    data[-1] ^= 1  # one bit of the last weight
    (tmp_path / "w.safetensors").write_bytes(bytes(data))
    proc = mpmd(paths, other, tmp_path)
    assert proc.returncode != 0
    assert "--weights" in proc.stderr and "differs between rank 0 and rank 1" in proc.stderr


def test_more_ranks_than_systems_is_an_error(tmp_path):
    torch.manual_seed(0)
    model = nn.Linear(8, 2)
    x, y = torch.randn(4, 8), torch.randn(4, 2)
    prog = wsc.compile(model, nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.1), x, y,
                       systems=2, mode="weight_streaming")
    paths = prog.save_for_run(tmp_path, [(x, y)])
    proc = subprocess.run([str(LAUNCHER), "-np", "3", wsc_run(), paths["schedule"],
                           "--weights", paths["weights"], "--data", paths["data"]],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert ("3 MPI ranks for 2 system(s): every rank runs at least one system (use mpirun "
            "-np <= 2)") in proc.stderr, proc.stderr
    # Rank 0 says it once, for all.
    assert proc.stderr.count("3 MPI ranks for 2 system(s)") == 1
