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
import re
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


def run(name, config, batch, systems, workdir, repeats, exported=None):
    """One model's compile and modeled step; ``exported`` is (text, seconds)
    of an export already made."""
    exported, export_s = exported or export(config, batch)
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


SYSTEMS = [1, 2, 4, 8, 16]
PLAN = re.compile(r"memory plan (.*?) \(recompute=\w+\): of \d+ activations kept for the "
                  r"backward pass, (\d+) stored, (\d+) recomputed, (\d+) offloaded")


def plan_summary(sentence):
    """'full: 42 stored, 345 recomputed' from the report's memory_plan ('store' when empty)."""
    found = PLAN.match(sentence)
    if not found:
        return "store" if not sentence else sentence.split(";")[0]
    kind, stored, recomputed, offloaded = found.groups()
    parts = [f"{n} {what}" for n, what in [(stored, "stored"), (recomputed, "recomputed"),
                                            (offloaded, "offloaded")] if n != "0"]
    return f"{kind}: {', '.join(parts)}"


def run_scaling(chosen, workdir, svg):
    """Each model at its paper batch on 1 to 16 systems: a markdown table
    (step, compute, streams, roofline ratio, memory plan, speedup and
    scaling efficiency against 1 system) and the speedups as an SVG."""
    print("| model | systems | micro-batch | memory plan | peak SRAM/PE | step | compute | "
          "stream | roofline | step / roofline | speedup | efficiency |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    curves = {}
    for name, config, batch, _ in chosen:
        exported = export(config, batch)
        base = None
        for systems in SYSTEMS:
            r = run(name, config, batch, systems, workdir, 1, exported)
            if "error" in r:
                print(f"| {name} | {systems} | | does not fit: {r['error'][:120]} "
                      "| | | | | | | | |", flush=True)
                continue
            base = base or (r["step_s"] * systems if systems > 1 else r["step_s"])
            speedup = base / r["step_s"]
            curves.setdefault(name, []).append((systems, speedup))
            print(f"| {name} | {systems} | {r['micro_batch']} | {plan_summary(r['plan'])} | "
                  f"{r['peak_sram']:,.0f} B | {r['step_s']:.2f} s | {r['compute_s']:.2f} s | "
                  f"{r['stream_s']:.2f} s | {r['roofline_s']:.2f} s | "
                  f"{r['step_s'] / r['roofline_s']:.2f}x | {speedup:.2f} | "
                  f"{speedup / systems:.2f} |", flush=True)
    if svg:
        with open(svg, "w") as f:
            f.write(speedup_svg(curves))


def speedup_svg(curves):
    """The white paper's Figure 24: speedup against systems, with the ideal."""
    width, height, left, bottom, top, right = 520, 380, 60, 50, 40, 140
    most = max(SYSTEMS)
    def x(n):
        return left + (width - left - right) * (n - 1) / (most - 1)
    def y(v):
        return height - bottom - (height - bottom - top) * v / most
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<text x="{width / 2 - 60}" y="20" font-size="14">Speedup against systems</text>',
           f'<line x1="{x(1)}" y1="{y(0)}" x2="{x(most)}" y2="{y(0)}" stroke="black"/>',
           f'<line x1="{x(1)}" y1="{y(0)}" x2="{x(1)}" y2="{y(most)}" stroke="black"/>',
           f'<text x="{(x(1) + x(most)) / 2 - 20}" y="{height - 12}">systems</text>',
           f'<text x="14" y="{(y(0) + y(most)) / 2}" transform="rotate(-90 14 '
           f'{(y(0) + y(most)) / 2})">speedup</text>']
    for n in SYSTEMS:
        out.append(f'<text x="{x(n) - 4}" y="{y(0) + 16}">{n}</text>')
        out.append(f'<text x="{x(1) - 24}" y="{y(n) + 4}">{n}</text>')
    out.append(f'<polyline points="{x(1)},{y(1)} {x(most)},{y(most)}" fill="none" '
               'stroke="gray" stroke-dasharray="4 4"/>')
    out.append(f'<text x="{width - right + 10}" y="{top + 10}" fill="gray">ideal</text>')
    for i, (name, points) in enumerate(curves.items()):
        color = colors[i % len(colors)]
        path = " ".join(f"{x(n):.1f},{y(v):.1f}" for n, v in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        out += [f'<circle cx="{x(n):.1f}" cy="{y(v):.1f}" r="3" fill="{color}"/>'
                for n, v in points]
        out.append(f'<text x="{width - right + 10}" y="{top + 30 + 20 * i}" '
                   f'fill="{color}">GPT-3 {name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


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
    parser.add_argument("--scaling", action="store_true",
                        help="each model on 1, 2, 4, 8 and 16 systems: a markdown table and, "
                             "with --svg, the speedups drawn")
    parser.add_argument("--svg", help="with --scaling: write the speedup figure here")
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
    if args.svg and not args.scaling:
        parser.error("--svg goes with --scaling")
    if args.scaling:
        with tempfile.TemporaryDirectory() as workdir:
            run_scaling(chosen, workdir, args.svg)
        return
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
