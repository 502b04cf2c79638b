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

``--depths 24 48 96`` instead times the compile alone of GPT-3 175B's width
cut to each depth: the export, ``wsc-opt``, ``wsc-translate`` and their
total, and the ``mlir-opt`` peer (docs/Performance.md, "Export at scale").
``--reference`` exports by tracing every block, as the exporter did before
it instantiated repeated blocks, and says whether the text is the same.
Compile times are medians of ``--repeats`` runs (3), ``wsc-opt`` and
``mlir-opt`` alternating.

    PYTHONPATH=python /usr/bin/python3 bench/gpt3_compile.py [--only 175b]
    PYTHONPATH=python /usr/bin/python3 bench/gpt3_compile.py --depths 24 48 96 [--reference]
"""
import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

from wsc import models
from wsc._export.capture import capture_training, named_parameters
from wsc._export.module import training_module
from wsc._export.optimizer import optimizer_attributes
from wsc.compiler import tool_path
from wsc.export import export_training_step

# size, config, batch in sequences (the GPT-3 paper's batch sizes), systems
MODELS = [(size, models.GPTConfig.gpt3(size), batch, systems)
          for size, batch, systems in [("xl", 512, 1), ("6.7b", 1024, 4), ("13b", 1024, 8),
                                       ("175b", 1536, 16)]]
MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"
RECOMPUTE = "auto"  # --recompute


def timed(cmd):
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - start, done


def first_error(stderr):
    """The compile's first error, without its location and source line."""
    for line in stderr.splitlines():
        if ": error: " in line:
            return line.split(": error: ", 1)[1]
    return stderr.strip().splitlines()[-1] if stderr.strip() else "unknown"


def export(config, batch, reference=False):
    """(MLIR text, seconds): one AdamW training step of GPT ``config`` on the meta device."""
    start = time.perf_counter()
    model = models.GPT(config, device="meta")
    ids = torch.empty(batch, config.seq, dtype=torch.int64, device="meta")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    if reference:  # export_training_step, tracing every block
        opt, groups = optimizer_attributes(optimizer, named_parameters(model))
        text = training_module(capture_training(model, models.LMLoss(), ids, ids,
                                                reference=True), opt, groups)
    else:
        text = export_training_step(model, models.LMLoss(), optimizer, ids, ids)
    return text, time.perf_counter() - start


def compile_times(src, systems, schedule, repeats):
    """Seconds of wsc-opt and the mlir-opt peer on ``src`` (medians of
    ``repeats`` runs, the two alternating so that both see the same machine;
    each writes its output to a file), then of wsc-translate; and wsc-opt's
    last run (its stderr on failure)."""
    compiled = schedule + ".mlir"
    wsc_runs, peer_runs = [], []
    for _ in range(repeats):
        wsc_s, done = timed([tool_path("wsc-opt"), src,
                             f"--wsc-pipeline=systems={systems} micro-batch=auto "
                             f"offload-activations=true recompute={RECOMPUTE}", "-o", compiled])
        peer_s, _ = timed([MLIR_OPT, "--canonicalize", "--cse", src, "-o", compiled + ".peer"])
        wsc_runs.append(wsc_s)
        peer_runs.append(peer_s)
        if done.returncode:
            break
    times = {"wsc_opt_s": statistics.median(wsc_runs), "peer_s": statistics.median(peer_runs)}
    if done.returncode:
        return times, done
    translate_s, translated = timed([tool_path("wsc-translate"), "--wsc-to-schedule", compiled,
                                     "-o", schedule])
    if translated.returncode:
        sys.exit(translated.stderr[-2000:])
    times["translate_s"] = translate_s
    return times, done


def run(name, config, batch, systems, workdir, repeats):
    exported, export_s = export(config, batch)
    src = os.path.join(workdir, f"gpt3-{name}.mlir")
    with open(src, "w") as f:
        f.write(exported)
    params, tokens = config.params(), batch * config.seq
    result = {"model": name, "params": params, "systems": systems, "tokens": tokens,
              "flops": 6 * tokens * params, "export_s": export_s}
    schedule = os.path.join(workdir, f"gpt3-{name}.json")
    times, done = compile_times(src, systems, schedule, repeats)
    result.update(times)
    if done.returncode:
        result["error"] = first_error(done.stderr)
        return result
    report = os.path.join(workdir, f"gpt3-{name}-report.json")
    _, modeled = timed([tool_path("wsc-run"), schedule, "--model-only", "--report", report])
    if modeled.returncode:
        sys.exit(modeled.stderr[-2000:])
    with open(report) as f:
        step = json.load(f)["steps"][-1]
    with open(schedule) as f:
        sched = json.load(f)
    t = sched["target"]
    peak = t["pe_x"] * t["pe_y"] * t["fmac_per_pe_per_cycle"] * 2 * t["clock_hz"]
    # The model's own FLOPs (weights and attention, forward and backward,
    # nothing recomputed) over the cluster's peak.
    model_flops = (6 * params + 12 * config.layers * config.seq * config.d) * tokens
    roofline = model_flops / systems / peak
    result.update(micro_batch=sched.get("micro_batch_size", batch // systems),
                  plan=sched["report"]["memory_plan"], step_s=step["time_s"],
                  compute_s=step["compute_s"], stream_s=step["stream_s"],
                  in_bytes=step["bytes_in"], roofline_s=roofline,
                  peak_sram=step["peak_sram_per_pe_bytes"])
    return result


def run_depths(depths, reference, workdir, repeats):
    """GPT-3 175B's width at each depth: export, wsc-opt, wsc-translate, total, peer."""
    _, base, batch, systems = next(m for m in MODELS if m[0] == "175b")
    for depth in depths:
        config = dataclasses.replace(base, layers=depth)
        text, export_s = export(config, batch)
        src = os.path.join(workdir, f"gpt3-175b-{depth}.mlir")
        with open(src, "w") as f:
            f.write(text)
        times, done = compile_times(src, systems, os.path.join(workdir, "schedule.json"),
                                    repeats)
        if done.returncode:
            print(f"{depth:4d} layers: export {export_s:.2f} s; wsc-opt failed: "
                  f"{first_error(done.stderr)}", flush=True)
            continue
        total = export_s + times["wsc_opt_s"] + times["translate_s"]
        line = (f"{depth:4d} layers: export {export_s:5.2f} s, wsc-opt {times['wsc_opt_s']:5.2f} s,"
                f" wsc-translate {times['translate_s']:5.2f} s, total {total:5.2f} s; "
                f"mlir-opt --canonicalize --cse {times['peer_s']:5.2f} s "
                f"(wsc-opt {times['wsc_opt_s'] / times['peer_s']:.1f}x)")
        if reference:
            old_text, old_s = export(config, batch, reference=True)
            line += (f"; tracing every block: export {old_s:5.2f} s, text "
                     + ("identical" if old_text == text else "DIFFERENT"))
        print(line, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="one model: xl, 6.7b, 13b or 175b")
    parser.add_argument("--depths", type=int, nargs="+", metavar="N",
                        help="time the compile of GPT-3 175B's width at these depths instead")
    parser.add_argument("--reference", action="store_true",
                        help="with --depths: also export tracing every block, and compare")
    parser.add_argument("--recompute", default="auto",
                        choices=["none", "auto", "full", "selective"],
                        help="the memory plan's recompute option (default auto)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs of wsc-opt and mlir-opt each, alternating; medians "
                             "(default 3)")
    args = parser.parse_args()
    global RECOMPUTE
    RECOMPUTE = args.recompute
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.depths:
        if args.only or min(args.depths) < 1:
            parser.error("--depths takes positive depths and no --only")
        with tempfile.TemporaryDirectory() as workdir:
            run_depths(args.depths, args.reference, workdir, args.repeats)
        return
    if args.reference:
        parser.error("--reference goes with --depths")
    chosen = [m for m in MODELS if args.only in (None, m[0])]
    if not chosen:
        parser.error(f"--only must be one of {[m[0] for m in MODELS]}")
    with tempfile.TemporaryDirectory() as workdir:
        for m in chosen:
            r = run(*m, workdir, args.repeats)
            head = (f"{r['model']:>5} {r['params'] / 1e9:6.1f}B params, {r['systems']} systems, "
                    f"{r['tokens'] / 1e6:.2f}M tokens, {r['flops'] / 1e15:.1f} PFLOP/step; "
                    f"export {r['export_s']:.1f} s, wsc-opt {r['wsc_opt_s']:.2f} s "
                    f"({r['wsc_opt_s'] / r['peer_s']:.1f}x mlir-opt --canonicalize --cse)")
            if "translate_s" in r:
                head += (f", wsc-translate {r['translate_s']:.2f} s; total "
                         f"{r['export_s'] + r['wsc_opt_s'] + r['translate_s']:.1f} s")
            print(head, flush=True)
            if "error" in r:
                print(f"      does not fit: {r['error']}", flush=True)
                continue
            print(f"      micro-batch {r['micro_batch']} sequences per system; peak SRAM "
                  f"{r['peak_sram']:.0f} B/PE; step {r['step_s']:.2f} s (compute "
                  f"{r['compute_s']:.2f} s, stream {r['stream_s']:.2f} s, in "
                  f"{r['in_bytes'] / 1e9:.1f} GB/system); roofline {r['roofline_s']:.2f} s, "
                  f"ratio {r['step_s'] / r['roofline_s']:.1f}x", flush=True)
            if r["plan"]:
                print(f"      {r['plan']}", flush=True)


if __name__ == "__main__":
    main()
