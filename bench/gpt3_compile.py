"""Shapes-only GPT-3 compiles: compile time and the per-step training report.

For GPT-3 XL, 6.7B, 13B and 175B (Brown et al. 2020, Table 2.1) built on the
meta device (no weights allocated), this exports one AdamW training step,
compiles it with ``wsc-opt --wsc-pipeline``, times ``mlir-opt --canonicalize
--cse`` on the same input as a peer, and runs the timing model
(``wsc-run --model-only``). It prints, per training step: FLOPs
(6 x tokens x params), MemoryX capacity (20 bytes per parameter), bytes
streamed each way, and the modeled step time split into its compute-bound and
I/O-bound parts; then how many kernels no data layout fits in PE SRAM and the
largest such kernel's need per PE. Formulas: docs/Scale.md.

    PYTHONPATH=python /usr/bin/python3 bench/gpt3_compile.py [--only 175b]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import torch

from wsc import models
from wsc.compiler import tool_path
from wsc.export import export_training_step

# size, config, batch in sequences (the GPT-3 paper's batch sizes), systems
MODELS = [(size, models.GPTConfig.gpt3(size), batch, systems)
          for size, batch, systems in [("xl", 512, 1), ("6.7b", 1024, 4), ("13b", 1024, 8),
                                       ("175b", 1536, 16)]]
MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"


# wsc-assign-layouts' warning for a kernel whose every layout overflows PE SRAM.
OVERFLOW = re.compile(r"warning: kernel '([^']+)': no layout fits the \d+-byte PE SRAM; "
                      r"took the smallest \(([^)]+)\), which needs (\d+) bytes per PE")


def timed(cmd, stdin=None, stderr=False):
    start = time.perf_counter()
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(cmd[:2])} failed:\n{done.stderr[-2000:]}")
    seconds = time.perf_counter() - start
    return (seconds, done.stdout, done.stderr) if stderr else (seconds, done.stdout)


def run(name, config, batch, systems, workdir):
    start = time.perf_counter()
    model = models.GPT(config, device="meta")
    ids = torch.empty(batch, config.seq, dtype=torch.int64, device="meta")
    exported = export_training_step(model, models.LMLoss(),
                                    torch.optim.AdamW(model.parameters(), lr=1e-4), ids, ids)
    export_s = time.perf_counter() - start
    src = os.path.join(workdir, f"gpt3-{name}.mlir")
    with open(src, "w") as f:
        f.write(exported)
    # At these batch shards some kernels' tensors overflow PE SRAM under
    # every layout (docs/Scale.md): compile anyway and count them.
    wsc_s, compiled, diagnostics = timed(
        [tool_path("wsc-opt"), f"--wsc-pipeline=systems={systems} allow-sram-overflow=true", src],
        stderr=True)
    overflows = [(int(need), kernel) for kernel, _, need in OVERFLOW.findall(diagnostics)]
    peer_s, _ = timed([MLIR_OPT, "--canonicalize", "--cse", src, "-o", os.devnull])
    schedule = os.path.join(workdir, f"gpt3-{name}.json")
    timed([tool_path("wsc-translate"), "--wsc-to-schedule", "-o", schedule], compiled)
    report = os.path.join(workdir, f"gpt3-{name}-report.json")
    timed([tool_path("wsc-run"), schedule, "--model-only", "--report", report])
    with open(report) as f:
        step = json.load(f)["steps"][-1]
    params = config.params()
    tokens = batch * config.seq
    return {
        "model": name, "params": params, "systems": systems, "tokens": tokens,
        "flops": 6 * tokens * params, "memx_bytes": 20 * params,
        "in_bytes": step["bytes_in"], "out_bytes": step["bytes_out"],
        "step_s": step["time_s"], "compute_s": step["compute_s"],
        "stream_s": step["stream_s"], "stall_s": step["stall_s"],
        "export_s": export_s, "wsc_opt_s": wsc_s, "peer_s": peer_s,
        "over_sram": len(overflows), "max_sram": max(overflows, default=(0, "")),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="one model: xl, 6.7b, 13b or 175b")
    args = parser.parse_args()
    chosen = [m for m in MODELS if args.only in (None, m[0])]
    if not chosen:
        parser.error(f"--only must be one of {[m[0] for m in MODELS]}")
    print(f"{'model':>5} {'params':>8} {'sys':>3} {'PFLOP/step':>10} {'MemoryX':>8} "
          f"{'in/sys':>8} {'out/sys':>8} {'step':>8} {'compute':>8} {'stream':>8} "
          f"{'stall':>7} {'export':>7} {'wsc-opt':>8} {'mlir-opt':>8} {'ratio':>6} "
          f"{'>SRAM':>6} {'largest kernel SRAM/PE':>24}")
    with tempfile.TemporaryDirectory() as workdir:
        for m in chosen:
            r = run(*m, workdir)
            print(f"{r['model']:>5} {r['params'] / 1e9:7.1f}B {r['systems']:>3} "
                  f"{r['flops'] / 1e15:10.1f} {r['memx_bytes'] / 1e12:6.2f}TB "
                  f"{r['in_bytes'] / 1e9:6.1f}GB {r['out_bytes'] / 1e9:6.1f}GB "
                  f"{r['step_s']:7.2f}s {r['compute_s']:7.2f}s {r['stream_s']:7.2f}s "
                  f"{r['stall_s']:6.2f}s {r['export_s']:6.1f}s {r['wsc_opt_s']:7.2f}s "
                  f"{r['peer_s']:7.2f}s {r['wsc_opt_s'] / r['peer_s']:5.1f}x "
                  f"{r['over_sram']:>6} {r['max_sram'][0] / 1024:8.0f} KB {r['max_sram'][1]}",
                  flush=True)


if __name__ == "__main__":
    main()
