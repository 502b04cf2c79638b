"""Checkpoints under `mpirun -np R wsc-run` (issues 19 and 20): rank 0 writes
them, and every rank resumes from the same file. A 4-system run trained 3
steps under mpirun and resumed under mpirun for 3 more writes exactly the
checkpoints (every step's) and final weights of an uninterrupted in-process
run; an in-process run resumes from a checkpoint written under mpirun too."""
import os

import torch

from mpi_runs import LAUNCHER
from test_checkpoint_kill import assert_same_file, checkpoints, mlp, prepare

CASE = dict(model=mlp, optimizer=lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
            mode="weight_streaming", systems=4)


def with_steps(command, steps):
    at = command.index("--steps")
    return command[:at + 1] + [str(steps)] + command[at + 2:]


def run(command, cwd, ranks=None, *extra):
    import subprocess
    full = list(command) + list(extra)
    if ranks:
        full = [str(LAUNCHER), "-np", str(ranks)] + full
    proc = subprocess.run(full, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(full)}\n{proc.stdout}\n{proc.stderr}"


def test_rank_0_writes_and_every_rank_resumes_from_the_same_file(tmp_path):
    command = with_steps(prepare(CASE, tmp_path), 6)
    run(command, tmp_path, None, "--checkpoint-dir", "reference",
        "--save-weights", "reference.safetensors")
    run(with_steps(command, 3), tmp_path, 2, "--checkpoint-dir", "mpi")
    assert checkpoints(tmp_path / "mpi") == [f"step-0000000{k}.safetensors" for k in (1, 2, 3)]
    run(command, tmp_path, 2, "--checkpoint-dir", "mpi", "--resume", "mpi",
        "--save-weights", "mpi.safetensors")
    # An in-process run picks up a checkpoint written under mpirun.
    run(command, tmp_path, None, "--resume", "mpi/step-00000003.safetensors",
        "--checkpoint-dir", "inprocess",
        "--save-weights", "inprocess.safetensors")
    names = checkpoints(tmp_path / "reference")
    assert len(names) == 6 and checkpoints(tmp_path / "mpi") == names
    for n in names:
        assert_same_file(tmp_path / "reference" / n, tmp_path / "mpi" / n)
    assert_same_file(tmp_path / "reference.safetensors", tmp_path / "mpi.safetensors")
    assert_same_file(tmp_path / "reference.safetensors", tmp_path / "inprocess.safetensors")
    assert checkpoints(tmp_path / "inprocess") == names[3:]
    for n in names[3:]:
        assert_same_file(tmp_path / "reference" / n, tmp_path / "inprocess" / n)
    # Only rank 0 wrote: no temp files of other ranks are left behind.
    assert sorted(os.listdir(tmp_path / "mpi")) == ["latest"] + names
