"""wsc-run --resume refuses what it cannot continue bitwise, with a message
naming the file and what is wrong, and exit status 1 (issue 20, part 3)."""
import subprocess

import pytest

from test_checkpoint_kill import CASES, prepare


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A run of the SGD case checkpointed after each of its 30 steps."""
    tmp = tmp_path_factory.mktemp("errors")
    command = prepare(CASES["sgd_momentum_dropout"], tmp)
    subprocess.run(command + ["--checkpoint-dir", "c"], cwd=tmp, check=True,
                   capture_output=True)
    return tmp, command


def without_checkpointing(command):
    at = command.index("--checkpoint-every")
    return command[:at] + command[at + 2:]


def resume_error(trained, *extra, command=None):
    tmp, base = trained
    proc = subprocess.run(without_checkpointing(command or base) + list(extra), cwd=tmp,
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    return proc.stderr.strip()


def test_a_corrupt_newest_checkpoint_names_the_previous_complete_one(trained, tmp_path):
    tmp, _ = trained
    newest = tmp / "c" / "step-00000030.safetensors"
    data = bytearray(newest.read_bytes())
    data[len(data) // 2] ^= 0x55
    (tmp / "c" / "step-00000031.safetensors").write_bytes(data)
    try:
        err = resume_error(trained, "--resume", "c")
    finally:
        (tmp / "c" / "step-00000031.safetensors").unlink()
    assert err.startswith("c/step-00000031.safetensors: corrupt checkpoint: the data of tensor")
    assert err.endswith("c: the newest checkpoint is unusable; the previous complete one is "
                        "c/step-00000030.safetensors (step 30): resume from it with --resume "
                        "c/step-00000030.safetensors")


def test_another_schedule_seed_or_data_is_refused(trained):
    tmp, command = trained
    at = "c/step-00000010.safetensors"
    assert resume_error(trained, "--resume", at, "--seed", "4") == (
        f"{at}: the checkpoint was trained with seed 0 but this run has seed 4 "
        "(the random draws would differ)")
    (tmp / "other").mkdir(exist_ok=True)
    other = prepare(CASES["batchnorm_2_systems"], tmp / "other")
    err = subprocess.run(without_checkpointing(other) + ["--resume", f"../{at}"],
                         cwd=tmp / "other", capture_output=True, text=True).stderr.strip()
    assert err.startswith(f"../{at}: the checkpoint is of a different schedule (fingerprint "
                          "mismatch):\n")
    assert "\n  optimizer: checkpoint sgd lr=0.05" in err
    assert "systems: checkpoint 1, schedule 2" in err
    # The same file, cut to 3 of its 6 batches.
    import numpy as np
    from wsc import safetensors
    d = safetensors.load(str(tmp / "d.safetensors"))
    safetensors.save({k: np.asarray(v)[:3] for k, v in d.items()}, str(tmp / "d3.safetensors"))
    data = command.index("--data") + 1
    short = command[:data] + ["d3.safetensors"] + command[data + 1:]
    assert resume_error(trained, "--resume", at, command=short) == (
        f"{at}: the checkpoint's data file ('d.safetensors') held 6 batches but --data "
        "d3.safetensors holds 3: resume with the same data")


def test_a_weights_file_or_nothing_to_resume_from(trained):
    assert resume_error(trained, "--resume", "w.safetensors").startswith(
        "w.safetensors: not a wsc checkpoint")
    assert resume_error(trained, "--resume", "nowhere") == (
        "nowhere: no such checkpoint file or directory")


@pytest.mark.parametrize("flags,message", [
    (["--keep", "2"], "--checkpoint-every and --keep need --checkpoint-dir"),
    (["--checkpoint-every", "0", "--checkpoint-dir", "c"],
     "--checkpoint-every expects an integer in [1, 1099511627776], got '0'"),
    (["--model-only", "--resume", "c"], "--checkpoint-dir and --resume need --data (training)"),
])
def test_checkpoint_flags_are_checked_as_usage_errors(trained, flags, message):
    tmp, command = trained
    proc = subprocess.run([command[0], "s.json"] + flags, cwd=tmp, capture_output=True,
                          text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"wsc-run: {message}\n")
