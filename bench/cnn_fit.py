"""torchvision CNNs at 224x224 on the wafer: do they fit, and how.

For resnet50 and vgg16 (random init, nothing downloaded), this exports one
SGD-momentum training step at 224x224, compiles it in each mode with
``micro-batch=auto`` (no ``allow-sram-overflow``: a step that does not fit
fails the compile), and prints per model and mode: the micro-batch chosen,
the modeled step from the timing model (``wsc-run --model-only``) with its
compute and stream parts, the peak SRAM per PE against the 48 KB, and the
data layouts chosen for the convolutions (their input's dims over x and y,
and how many kernels took each). As a peer it prints the same step's FLOPs
over the wafer's peak: the compute-bound floor of the step.

    PYTHONPATH=python /usr/bin/python3 bench/cnn_fit.py [--batch 64] [--models resnet50]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

import torch
import torchvision.models as tv
from torch import nn

from wsc.compiler import tool_path
from wsc.export import export_training_step

CONV_INPUT = re.compile(r'wsc\.kernel "([^"]*conv[^"]*\.fwd|features\.\d+\.fwd)" .*?'
                        r'operand_layouts = \[#wsc\.layout<dims = \[[^\]]*\], '
                        r'x = \[([^\]]*)\], y = \[([^\]]*)\]')


def run(cmd, stdin=None):
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{os.path.basename(cmd[0])} failed:\n{done.stderr[-3000:]}")
    return done.stdout, done.stderr


def export(name, batch):
    torch.manual_seed(0)
    model = getattr(tv, name)(num_classes=1000)
    x = torch.randn(batch, 3, 224, 224)
    y = torch.randint(0, 1000, (batch,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    # FLOPs: forward MACs x 2 x 3 (forward, data and weight gradients).
    counted = []
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            module.register_forward_hook(lambda m, i, o: counted.append(
                o.numel() * m.in_channels // m.groups * m.kernel_size[0] * m.kernel_size[1]))
        elif isinstance(module, nn.Linear):
            module.register_forward_hook(lambda m, i, o: counted.append(
                o.numel() * m.in_features))
    with torch.no_grad():
        model(x[:1])
    flops = 6 * sum(counted) * batch
    for module in model.modules():
        module._forward_hooks.clear()
    return export_training_step(model, nn.CrossEntropyLoss(), opt, x, y), flops


def compile_and_model(src, mode, workdir):
    compiled, diagnostics = run([tool_path("wsc-opt"), src,
                                 f"--wsc-pipeline=systems=1 mode={mode} micro-batch=auto"])
    decision = re.search(r"remark: (micro-batch [^\n]*|none[^\n]*)", diagnostics)
    schedule = os.path.join(workdir, f"{mode}.json")
    run([tool_path("wsc-translate"), "--wsc-to-schedule", "-o", schedule], compiled)
    report = os.path.join(workdir, f"{mode}-report.json")
    run([tool_path("wsc-run"), schedule, "--model-only", "--report", report])
    with open(report) as f:
        step = json.load(f)["steps"][-1]
    with open(schedule) as f:
        t = json.load(f)["target"]
    # The wafer's peak: every PE's FMACs (2 FLOPs each) every cycle.
    step["peak_flops"] = t["pe_x"] * t["pe_y"] * t["fmac_per_pe_per_cycle"] * 2 * t["clock_hz"]
    layouts = collections.Counter(f"x=[{x}] y=[{y}]" for _, x, y in CONV_INPUT.findall(compiled))
    return step, layouts, decision.group(1) if decision else "none"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--models", nargs="+", default=["resnet50", "vgg16"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        for name in args.models:
            text, flops = export(name, args.batch)
            src = os.path.join(workdir, f"{name}.mlir")
            with open(src, "w") as f:
                f.write(text)
            for mode in ("weight_streaming", "layer_pipelined"):
                step, layouts, decision = compile_and_model(src, mode, workdir)
                print(f"{name} batch {args.batch}, {mode}: modeled step "
                      f"{step['time_s'] * 1e3:.3f} ms (compute {step['compute_s'] * 1e3:.3f} ms, "
                      f"stream {step['stream_s'] * 1e3:.3f} ms), peak SRAM "
                      f"{step['peak_sram_per_pe_bytes']:.0f} of 49152 B/PE; "
                      f"{flops / 1e12:.2f} TFLOP, FLOPs / peak = {flops / step['peak_flops'] * 1e3:.3f} ms",
                      flush=True)
                print(f"  {decision}")
                for layout, count in layouts.most_common():
                    print(f"  {count:3d} conv kernels with input {layout}")


if __name__ == "__main__":
    main()
