"""Wall time per training step with the systems one after another, on
threads in one process, and on MPI ranks (issue 19).

    PYTHONPATH=python /usr/bin/python3 bench/mpi_step.py [--steps N] [--width W]

For 1, 2 and 4 systems, an MLP whose per-system compute dominates (each
system's batch shard is large next to the weights it streams) trains with
wsc-run:
  - sequential:   the systems one after another on one core (--threads 1);
  - seq+BLAS:     one after another, BLAS on every core (--system-threads 1);
  - threaded:     one system per core, one BLAS thread each (--threads = cores);
  - mpirun -np 2: two ranks (scripts/wsc-mpirun), one core each.
It prints the median wall time per step (step 0 left out) and each mode's
speedup over sequential; the issue's target is >= 1.7x on 2 cores. All modes
train bitwise alike except seq+BLAS (a different BLAS thread count,
docs/Runtime.md).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from steptime import blas_core_env  # noqa: E402


def save(directory, systems, width, per_system, layers):
    import torch
    from torch import nn
    import wsc
    torch.manual_seed(0)
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*mods[:-1])
    batch = per_system * systems
    x, y = torch.randn(batch, width), torch.randint(0, width, (batch,))
    prog = wsc.compile(model, nn.CrossEntropyLoss(),
                       torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9), x, y,
                       systems=systems, mode="weight_streaming")
    return prog.save_for_run(directory, [(x, y)])


def step_seconds(paths, steps, flags, ranks, env):
    from wsc import compiler
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        cmd = [compiler.tool_path("wsc-run"), paths["schedule"], "--weights", paths["weights"],
               "--data", paths["data"], "--steps", str(steps), "--quiet", "--report", report,
               *flags]
        if ranks:
            cmd = [str(ROOT / "scripts" / "wsc-mpirun"), "-np", str(ranks), *cmd]
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        walls = [s["wall_s"] for s in json.load(open(report))["steps"]]
    return statistics.median(walls[1:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--per-system", type=int, default=256, help="samples per system")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    core_env, core = blas_core_env()
    env = dict(os.environ, **core_env)
    print(f"mpi_step: {args.layers}-layer {args.width}-wide MLP, {args.per_system} samples "
          f"per system, {cores} cores, OpenBLAS core {core}; median wall per step")
    print(f"{'systems':>7}  {'sequential':>10}  {'seq+BLAS':>16}  {'threaded':>16}  "
          f"{'mpirun -np 2':>16}")
    for systems in (1, 2, 4):
        with tempfile.TemporaryDirectory() as tmp:
            paths = save(tmp, systems, args.width, args.per_system, args.layers)
            seq = step_seconds(paths, args.steps, ["--threads", "1"], None, env)
            cells = [f"{seq * 1e3:8.1f} ms"]
            modes = [(["--threads", str(cores), "--system-threads", "1"], None),
                     (["--threads", str(cores)], None),
                     (["--threads", "1"], 2 if systems >= 2 else None)]
            for i, (flags, ranks) in enumerate(modes):
                if i == 2 and ranks is None:
                    cells.append(f"{'n/a (1 system)':>16}")
                    continue
                t = step_seconds(paths, args.steps, flags, ranks, env)
                cells.append(f"{t * 1e3:7.1f} ms {seq / t:4.2f}x")
        print(f"{systems:>7}  {cells[0]:>10}  {cells[1]:>16}  {cells[2]:>16}  {cells[3]:>16}")
    print("(x: speedup over sequential; target >= 1.7x on 2 cores with 2 or 4 systems)")


if __name__ == "__main__":
    main()
