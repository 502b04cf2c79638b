"""`wsc-run --sparsity`: the same dynamic-sparsity training as the Python API
(Program.step with a wsc.sparse_schedule), bit for bit: both run the C++
mask schedules (include/wsc/Sparse/MaskSchedule.h), from the same weights,
masks and data. Bad --sparsity files are errors naming the file and field."""
import json
import subprocess

import numpy as np
import pytest
import torch
from torch import nn

import wsc
from wsc import compiler, safetensors
from wsc.sparse import magnitude_mask, pick
from wsc.sparse_schedule import SET, DynamicSparsity, GradualMagnitudePruning, RigL

STEPS = 8


def mlp():
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 10))


def batches():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(16, 32, generator=g), torch.randint(0, 10, (16,), generator=g))
            for _ in range(STEPS)]


def run_both(schedule, entry, tmp_path, mode="weight_streaming", systems=1,
             optimizer=lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1)):
    """Trains an MLP with `schedule` through the Python API and through
    wsc-run with the --sparsity `entry` (the same schedule as JSON); returns
    (Python losses, final weights, final masks) and wsc-run's (losses,
    weights, report)."""
    torch.manual_seed(0)
    model = mlp()
    # The weights before start() prunes them: wsc-run computes the same
    # initial masks from them.
    dense = {k: v.detach().clone().numpy() for k, v in model.state_dict().items()}
    data = batches()
    prog = wsc.compile(model, nn.CrossEntropyLoss(), optimizer(model.parameters()),
                       data[0][0], data[0][1], mode=mode, systems=systems, sparsity=schedule)
    ours = [prog.step(x, y) for x, y in data]

    paths = {n: tmp_path / n for n in ("s.json", "w.safetensors", "d.safetensors",
                                       "sparsity.json", "out.safetensors", "r.json")}
    paths["s.json"].write_text(json.dumps(prog.schedule))
    safetensors.save(dense, str(paths["w.safetensors"]))
    names = [i["name"] for i in prog.schedule["inputs"]]
    safetensors.save({names[0]: torch.stack([x for x, _ in data]).numpy(),
                      names[1]: torch.stack([y for _, y in data]).numpy()},
                     str(paths["d.safetensors"]))
    paths["sparsity.json"].write_text(json.dumps({"schedules": [entry]}))
    subprocess.run([compiler.tool_path("wsc-run"), paths["s.json"],
                    "--weights", paths["w.safetensors"], "--data", paths["d.safetensors"],
                    "--sparsity", paths["sparsity.json"], "--quiet",
                    "--save-weights", paths["out.safetensors"], "--report", paths["r.json"]],
                   check=True, capture_output=True, text=True)
    report = json.loads(paths["r.json"].read_text())
    theirs = [s["loss"] for s in report["steps"]]
    return (ours, prog.state_dict(), prog.masks()), \
        (theirs, safetensors.load(str(paths["out.safetensors"])), report)


def assert_bitwise(python, cli, prog_schedule_names):
    (ours, weights, masks), (theirs, saved, _) = python, cli
    # Losses: the report keeps the double the step returned, as Program.step does.
    assert ours == theirs
    for name in prog_schedule_names:
        got, want = np.asarray(saved[name]), weights[name].numpy()
        assert got.dtype == want.dtype and np.array_equal(got.view(np.uint32),
                                                          want.view(np.uint32)), name
    for name, mask in masks.items():  # masked weights are exactly zero in wsc-run too
        assert np.all(np.asarray(saved[name])[~mask.numpy()] == 0), name


@pytest.mark.parametrize("systems", [1, 2])
def test_rigl_through_wsc_run_equals_the_python_api_bitwise(systems, tmp_path):
    rigl = RigL(0.9, end_step=STEPS, update_frequency=2, drop_fraction=0.5)
    entry = {"schedule": "rigl", "params": "sparse", "sparsity": 0.9, "end_step": STEPS,
             "update_frequency": 2, "drop_fraction": 0.5}
    python, cli = run_both(rigl, entry, tmp_path, systems=systems)
    assert_bitwise(python, cli, python[1].keys())
    # RigL really moved the masks: dense gradients came back on update steps.
    report = cli[2]
    grads = [{p["name"]: p["gradient_bytes"] for p in s["sparse"]["params"]}
             for s in report["steps"]]
    updating = [t for t in range(STEPS) if rigl.updates_at(t)]
    assert updating == [1, 3, 5]
    for t, g in enumerate(grads):
        assert (g["0.weight"] == 4 * 64 * 32) == (t in updating), t
    first = python[2]["0.weight"]
    assert int(first.sum()) == 64 * 32 - round(0.9 * 64 * 32)


@pytest.mark.parametrize("kind", ["set", "gmp"])
def test_set_and_gmp_through_wsc_run_equal_the_python_api_bitwise(kind, tmp_path):
    if kind == "set":
        schedule = SET(0.8, end_step=STEPS, update_frequency=3, seed=7, init="magnitude")
        entry = {"schedule": "set", "params": ["0.weight", "2.weight", "4.weight"],
                 "sparsity": 0.8, "end_step": STEPS, "update_frequency": 3, "seed": 7,
                 "init": "magnitude"}
    else:
        schedule = GradualMagnitudePruning(0.9, end_step=6, initial_sparsity=0.2, frequency=2)
        entry = {"schedule": "gmp", "params": "sparse", "final_sparsity": 0.9, "end_step": 6,
                 "initial_sparsity": 0.2, "frequency": 2}
    python, cli = run_both(schedule, entry, tmp_path,
                           optimizer=lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9))
    assert_bitwise(python, cli, python[1].keys())


def test_rigl_layer_pipelined_through_wsc_run_equals_the_python_api(tmp_path):
    rigl = RigL(0.8, end_step=STEPS, update_frequency=4)
    # Layer-pipelined schedules mark no parameter sparse: name them.
    entry = {"schedule": "rigl", "params": ["0.weight", "2.weight", "4.weight"],
             "sparsity": 0.8, "end_step": STEPS, "update_frequency": 4}
    python, cli = run_both(rigl, entry, tmp_path, mode="layer_pipelined")
    assert_bitwise(python, cli, python[1].keys())


@pytest.fixture(scope="module")
def sparse_run(tmp_path_factory):
    """A compiled sparse MLP's schedule, weights and data for the error cases."""
    tmp = tmp_path_factory.mktemp("bad")
    torch.manual_seed(0)
    model = mlp()
    data = batches()[:1]
    prog = wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                       data[0][0], data[0][1], mode="weight_streaming",
                       sparsity=RigL(0.9, end_step=4))
    (tmp / "s.json").write_text(json.dumps(prog.schedule))
    safetensors.save({k: v.detach().numpy() for k, v in model.state_dict().items()},
                     str(tmp / "w.safetensors"))
    names = [i["name"] for i in prog.schedule["inputs"]]
    safetensors.save({names[0]: data[0][0].numpy(), names[1]: data[0][1].numpy()},
                     str(tmp / "d.safetensors"))
    safetensors.save({"0.weight": np.ones((64, 32), np.float32)}, str(tmp / "float.safetensors"))
    return tmp


RIGL = {"schedule": "rigl", "params": "sparse", "sparsity": 0.9, "end_step": 4}


@pytest.mark.parametrize("config, message", [
    ("[1", "not valid JSON"),
    ({"schedule": "rigl"}, "unknown field 'schedule' (known: schedules, masks)"),
    ({}, "expected \"schedules\" (a list) or \"masks\""),
    ({"schedules": [dict(RIGL, sparsity=1.5)]},
     "schedules[0]: sparsity must be a number in [0, 1), got 1.5"),
    ({"schedules": [dict(RIGL, drop_fraction=0)]}, "drop_fraction must be a number in (0, 1]"),
    ({"schedules": [dict(RIGL, schedule="lottery")]},
     "schedules[0].schedule: expected \"gmp\", \"rigl\" or \"set\", got \"lottery\""),
    ({"schedules": [dict(RIGL, final_sparsity=0.5)]},
     "schedules[0]: unknown field 'final_sparsity' for a rigl schedule"),
    ({"schedules": [dict(RIGL, params=["nope"])]},
     "schedules[0].params[0]: 'nope' is not a parameter of the schedule"),
    ({"schedules": [dict(RIGL, params=["0.weight"]), dict(RIGL, params=["0.weight"])]},
     "schedules[1].params: '0.weight' is driven by an earlier schedule too"),
    ({"schedules": [dict(RIGL, end_step="4")]}, "schedules[0].end_step: expected an integer"),
    ({"schedules": [dict(RIGL, init="zeros")]},
     "schedules[0].init: expected \"random\" or \"magnitude\", got \"zeros\""),
    ({"schedules": [{k: v for k, v in RIGL.items() if k != "end_step"}]},
     "schedules[0]: missing field 'end_step'"),
    ({"masks": "missing.safetensors"}, "missing.safetensors: cannot open file"),
    ({"masks": "float.safetensors"}, "mask '0.weight' has dtype F32, expected BOOL"),
])
def test_bad_sparsity_files_name_the_file_and_field(sparse_run, config, message):
    path = sparse_run / "sparsity.json"
    path.write_text(config if isinstance(config, str) else json.dumps(config))
    out = subprocess.run([compiler.tool_path("wsc-run"), sparse_run / "s.json",
                          "--weights", sparse_run / "w.safetensors",
                          "--data", sparse_run / "d.safetensors", "--sparsity", path],
                         capture_output=True, text=True)
    assert out.returncode == 1, out.stderr
    assert out.stderr.startswith(str(path) + ": "), out.stderr
    assert message in out.stderr, out.stderr


def test_sparsity_without_data_is_a_usage_error(sparse_run):
    out = subprocess.run([compiler.tool_path("wsc-run"), sparse_run / "s.json",
                          "--weights", sparse_run / "w.safetensors", "--sparsity", "x.json"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "--sparsity needs --data" in out.stderr


def test_a_masks_file_fixes_masks_and_starts_schedules(sparse_run, tmp_path):
    """A masks file gives fixed masks (a parameter without a schedule) and a
    schedule's starting masks; wsc-run keeps masked weights at zero."""
    g = torch.Generator().manual_seed(3)
    first = torch.rand(64, 32, generator=g) < 0.3
    last = torch.rand(10, 64, generator=g) < 0.5
    safetensors.save({"0.weight": first.numpy(), "4.weight": last.numpy()},
                     str(tmp_path / "m.safetensors"))
    (tmp_path / "sp.json").write_text(json.dumps({
        "masks": "m.safetensors",
        "schedules": [dict(RIGL, params=["0.weight"], sparsity=0.5, update_frequency=1)]}))
    out = tmp_path / "out.safetensors"
    subprocess.run([compiler.tool_path("wsc-run"), sparse_run / "s.json",
                    "--weights", sparse_run / "w.safetensors", "--data",
                    sparse_run / "d.safetensors", "--steps", "3", "--quiet",
                    "--sparsity", tmp_path / "sp.json", "--save-weights", out],
                   check=True, capture_output=True, text=True)
    saved = safetensors.load(str(out))
    assert np.all(np.asarray(saved["4.weight"])[~last.numpy()] == 0)
    # 0.weight kept its file mask's nnz through RigL's updates (the masks
    # file's 30%, not the schedule's 50%), and moved.
    nnz = int(first.sum())
    active = np.asarray(saved["0.weight"]) != 0
    assert active.sum() <= nnz and (active & ~first.numpy()).any()


class PruneOnePerStep(DynamicSparsity):
    """A schedule written in Python alone, the way users extend
    DynamicSparsity: it prunes the smallest active weight after every step."""
    source = "explicit"

    def __init__(self):
        super().__init__(lambda name, param, module: name == "0.weight")
        self._planned_sparsity = 0.5

    def updates_at(self, step):
        return True

    def _initial_mask(self, param):
        return magnitude_mask(param, 0.5)

    def _change(self, step, magnitude, mask, grad):
        mask[pick(magnitude, mask, 1, largest=False)] = False


def test_a_python_only_schedule_subclass_still_trains():
    torch.manual_seed(0)
    model = mlp()
    data = batches()[:3]
    prog = wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                       data[0][0], data[0][1], mode="weight_streaming",
                       sparsity=PruneOnePerStep())
    assert prog.schedule["params"][0]["sparsity"]["density"] == pytest.approx(0.5)
    for x, y in data:
        prog.step(x, y)
    assert int(prog.masks()["0.weight"].sum()) == 64 * 32 // 2 - 3
