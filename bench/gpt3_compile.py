"""Shapes-only GPT-3 compiles that must fit the wafer: micro-batch and roofline.

For GPT-3 XL, 6.7B, 13B and 175B (Brown et al. 2020, Table 2.1) built on the
meta device (no weights allocated), this exports one AdamW training step at
the GPT-3 paper's batch sizes and compiles it with ``wsc-opt --wsc-pipeline``
and ``micro-batch=auto offload-activations=true``, **without**
``allow-sram-overflow``: every kernel and the step's peak must fit PE SRAM,
or the compile fails and the bench prints what does not fit. For a step that
compiles it runs the timing model (``wsc-run --model-only``) and prints the
chosen micro-batch, the activations kept in MemoryX, the modeled step with
its compute and stream parts, and its ratio to the roofline
``max(6 x tokens x params / (systems x peak FLOP/s), bytes in per system /
I/O bandwidth)``. As a compile-time peer it times ``mlir-opt --canonicalize
--cse`` on the same input. Formulas: docs/Scale.md.

    PYTHONPATH=python /usr/bin/python3 bench/gpt3_compile.py [--only 175b]
"""
import argparse
import json
import os
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


def timed(cmd, stdin=None):
    start = time.perf_counter()
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    return time.perf_counter() - start, done


def first_error(stderr):
    """The compile's first error, without its location and source line."""
    for line in stderr.splitlines():
        if ": error: " in line:
            return line.split(": error: ", 1)[1]
    return stderr.strip().splitlines()[-1] if stderr.strip() else "unknown"


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
    params, tokens = config.params(), batch * config.seq
    result = {"model": name, "params": params, "systems": systems, "tokens": tokens,
              "flops": 6 * tokens * params, "export_s": export_s}
    wsc_s, done = timed([tool_path("wsc-opt"), src,
                         f"--wsc-pipeline=systems={systems} micro-batch=auto "
                         "offload-activations=true"])
    peer_s, _ = timed([MLIR_OPT, "--canonicalize", "--cse", src, "-o", os.devnull])
    result.update(wsc_opt_s=wsc_s, peer_s=peer_s)
    if done.returncode:
        result["error"] = first_error(done.stderr)
        return result
    schedule = os.path.join(workdir, f"gpt3-{name}.json")
    _, translated = timed([tool_path("wsc-translate"), "--wsc-to-schedule", "-o", schedule],
                          done.stdout)
    report = os.path.join(workdir, f"gpt3-{name}-report.json")
    _, modeled = timed([tool_path("wsc-run"), schedule, "--model-only", "--report", report])
    for step in (translated, modeled):
        if step.returncode:
            sys.exit(step.stderr[-2000:])
    with open(report) as f:
        step = json.load(f)["steps"][-1]
    with open(schedule) as f:
        sched = json.load(f)
    t = sched["target"]
    peak = t["pe_x"] * t["pe_y"] * t["fmac_per_pe_per_cycle"] * 2 * t["clock_hz"]
    roofline = max(result["flops"] / systems / peak, step["bytes_in"] / t["io_bytes_per_s"])
    result.update(micro_batch=sched.get("micro_batch_size", batch // systems),
                  offload=sched["report"]["offload"], step_s=step["time_s"],
                  compute_s=step["compute_s"], stream_s=step["stream_s"],
                  in_bytes=step["bytes_in"], roofline_s=roofline,
                  peak_sram=step["peak_sram_per_pe_bytes"])
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="one model: xl, 6.7b, 13b or 175b")
    args = parser.parse_args()
    chosen = [m for m in MODELS if args.only in (None, m[0])]
    if not chosen:
        parser.error(f"--only must be one of {[m[0] for m in MODELS]}")
    with tempfile.TemporaryDirectory() as workdir:
        for m in chosen:
            r = run(*m, workdir)
            head = (f"{r['model']:>5} {r['params'] / 1e9:6.1f}B params, {r['systems']} systems, "
                    f"{r['tokens'] / 1e6:.2f}M tokens, {r['flops'] / 1e15:.1f} PFLOP/step; "
                    f"export {r['export_s']:.1f} s, wsc-opt {r['wsc_opt_s']:.2f} s "
                    f"({r['wsc_opt_s'] / r['peer_s']:.1f}x mlir-opt --canonicalize --cse)")
            print(head, flush=True)
            if "error" in r:
                print(f"      does not fit: {r['error']}", flush=True)
                continue
            print(f"      micro-batch {r['micro_batch']} sequences per system; peak SRAM "
                  f"{r['peak_sram']:.0f} B/PE; step {r['step_s']:.2f} s (compute "
                  f"{r['compute_s']:.2f} s, stream {r['stream_s']:.2f} s, in "
                  f"{r['in_bytes'] / 1e9:.1f} GB/system); roofline {r['roofline_s']:.2f} s, "
                  f"ratio {r['step_s'] / r['roofline_s']:.1f}x", flush=True)
            if r["offload"]:
                print(f"      offload: {r['offload']}", flush=True)


if __name__ == "__main__":
    main()
