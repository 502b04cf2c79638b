"""Runs wsc-run in one process and under mpirun (scripts/wsc-mpirun, the one
launcher with the CI flags), and compares what they leave behind bit for bit:
the per-step losses and modeled report (--report), the final weights and
buffers (--save-weights)."""
import json
import os
import pathlib
import subprocess
import time

import numpy as np

from wsc import compiler, safetensors

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "scripts" / "wsc-mpirun"
# Measured wall time differs from run to run, and the bytes each process
# reads from --data with the ranks; everything else must not.
MEASURED_KEYS = {"wall_s", "rank_wall_s", "data_bytes_read"}


def wsc_run():
    return compiler.tool_path("wsc-run")


def run(paths, out_dir, ranks=None, threads=1, extra=(), timeout=240):
    """wsc-run on `paths` (Program.save_for_run's) in one process (ranks
    None) or under `mpirun -np ranks`; returns (report, weights, process).
    Every rank and the in-process run get `threads` cores: results are the
    same bit for bit at equal BLAS threads per system (docs/Runtime.md)."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report, weights = out_dir / "report.json", out_dir / "weights.safetensors"
    cmd = [wsc_run(), paths["schedule"], "--weights", paths["weights"],
           "--data", paths["data"], "--report", str(report), "--save-weights", str(weights),
           "--threads", str(threads), "--quiet", *extra]
    if "sparsity" in paths:
        cmd += ["--sparsity", paths["sparsity"]]
    if ranks is not None:
        cmd = [str(LAUNCHER), "-np", str(ranks), *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{proc.stdout}\n{proc.stderr}"
    return json.loads(report.read_text()), safetensors.load(str(weights)), proc


def data_share_bytes(paths, ranks, steps):
    """What each rank of `ranks` must read from the data file in a run of
    `steps` steps: the header, then its systems' samples (contiguous rows
    of every input) of each batch, once to check the batches before step 0
    and once per step."""
    schedule = json.loads(pathlib.Path(paths["schedule"]).read_text())
    systems, batch = schedule["systems"], schedule["global_batch"]
    raw = pathlib.Path(paths["data"]).read_bytes()
    header_len = int.from_bytes(raw[:8], "little")
    entries = {k: v for k, v in json.loads(raw[8:8 + header_len]).items()
               if k != "__metadata__"}
    batches = next(iter(entries.values()))["shape"][0]
    sample_bytes = sum((e["data_offsets"][1] - e["data_offsets"][0]) // (batches * batch)
                       for e in entries.values())
    per_system = [len(s) for s in np.array_split(np.arange(batch), systems)]
    groups = np.array_split(np.arange(systems), ranks)
    reads = min(batches, steps) + steps
    return [8 + header_len + reads * sample_bytes * sum(per_system[k] for k in g)
            for g in groups]


def without_measured(value):
    """The report without what is measured (MEASURED_KEYS)."""
    if isinstance(value, dict):
        return {k: without_measured(v) for k, v in value.items() if k not in MEASURED_KEYS}
    if isinstance(value, list):
        return [without_measured(v) for v in value]
    return value


def assert_same_run(a, b, what):
    """Losses, modeled report, final weights and buffers: bitwise."""
    (report_a, weights_a, _), (report_b, weights_b, _) = a, b
    losses_a = [s["loss"] for s in report_a["steps"]]
    assert losses_a == [s["loss"] for s in report_b["steps"]], what
    assert without_measured(report_a) == without_measured(report_b), what
    assert sorted(weights_a) == sorted(weights_b), what
    for name, want in weights_a.items():
        got = weights_b[name]
        assert got.dtype == want.dtype and got.shape == want.shape, (what, name)
        assert got.tobytes() == want.tobytes(), (what, name)


def start(paths, out_dir, ranks, extra=()):
    """An mpirun job in the background: (process, the command)."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = [str(LAUNCHER), "-np", str(ranks), wsc_run(), paths["schedule"],
           "--weights", paths["weights"], "--data", paths["data"], "--threads", "1",
           "--save-weights", str(out_dir / "weights.safetensors"), *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, WSC_MPIRUN_TIMEOUT="120")), cmd


def rank_pids(parent_pid):
    """The wsc-run processes mpirun started, by rank (OMPI_COMM_WORLD_RANK)."""
    pids = {}
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            env = (proc / "environ").read_bytes().split(b"\0")
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        if b"OMPI_COMM_WORLD_RANK=" not in b"\0".join(env) or "wsc-run" not in stat:
            continue
        # Ours only: a descendant of this mpirun.
        if f"OMPI_MCA_orte_launch={parent_pid}".encode() in env or _descends(proc, parent_pid):
            rank = [e for e in env if e.startswith(b"OMPI_COMM_WORLD_RANK=")][0]
            pids[int(rank.split(b"=")[1])] = int(proc.name)
    return pids


def _descends(proc, ancestor):
    pid = int(proc.name)
    for _ in range(8):
        try:
            ppid = int(pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            return False
        if ppid == ancestor:
            return True
        if ppid <= 1:
            return False
        pid = ppid
    return False


def wait_for_ranks(job, ranks, timeout=60):
    """The ranks' pids once every one has started."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = rank_pids(job.pid)
        if len(pids) == ranks:
            return pids
        time.sleep(0.05)
    raise AssertionError(f"mpirun did not start {ranks} ranks in {timeout} s")


def same_file(a, b):
    return pathlib.Path(a).read_bytes() == pathlib.Path(b).read_bytes()


def as_arrays(weights):
    return {k: np.asarray(v) for k, v in weights.items()}
