"""Layer-pipelined vs weight-streaming, modeled, on models that fit a wafer.

    PYTHONPATH=python /usr/bin/python3 bench/modes.py

For each model, compiles the same training step three ways: layer-pipelined
on one wafer, and weight streaming on one and on four systems (f16
streams). Prints each one's modeled step time and the ratios of the
weight-streaming times to the layer-pipelined one, plus the layer-pipelined
placement (slowest layer against the area lower bound) and compile times.
All figures come from the timing models (docs/Runtime.md) after one step on
the emulator; nothing here is timed on the CPU except compilation.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))

import torch  # noqa: E402
from torch import nn  # noqa: E402

import wsc  # noqa: E402
from cnn_models import small_cnn  # noqa: E402
from transformer_models import GPT, LMLoss, token_batches  # noqa: E402


def mlp():
    torch.manual_seed(0)
    layers = [nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
              nn.Linear(1024, 10)]
    return (nn.Sequential(*layers), nn.CrossEntropyLoss(), torch.randn(256, 784),
            torch.randint(0, 10, (256,)))


def cnn():
    torch.manual_seed(0)
    return (small_cnn(), nn.CrossEntropyLoss(), torch.randn(64, 3, 12, 12),
            torch.randint(0, 10, (64,)))


def gpt():
    torch.manual_seed(0)
    x, y = token_batches(1, 16, 64, 512)[0]
    return GPT(layers=2, seq=64, vocab=512, d=128, heads=4), LMLoss(), x, y


def run(build, mode, systems):
    model, loss_fn, x, y = build()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    t0 = time.perf_counter()
    prog = wsc.compile(model, loss_fn, opt, x, y, mode=mode, systems=systems)
    compile_s = time.perf_counter() - t0
    prog.step(x, y)
    report = prog.report()
    assert report["mode"] == mode, report["mode_reason"]
    return report, compile_s


def main():
    print(f"{'model':>5} {'LP step':>10} {'WS x1':>10} {'WS x4':>10} {'WS1/LP':>7} "
          f"{'WS4/LP':>7} {'samples/s LP':>13}  placement")
    for name, build in (("mlp", mlp), ("cnn", cnn), ("gpt", gpt)):
        lp, lp_s = run(build, "layer_pipelined", 1)
        ws1, _ = run(build, "weight_streaming", 1)
        ws4, _ = run(build, "weight_streaming", 4)
        t_lp, t1, t4 = (r["last_step"]["time_s"] for r in (lp, ws1, ws4))
        pipeline = lp["last_step"]["pipeline"]
        print(f"{name:>5} {t_lp * 1e6:>8.2f}us {t1 * 1e6:>8.2f}us {t4 * 1e6:>8.2f}us "
              f"{t1 / t_lp:>6.2f}x {t4 / t_lp:>6.2f}x {pipeline['samples_per_s']:>13.4g}  "
              f"{lp['placement_summary']} (LP compile {lp_s:.2f}s)")


if __name__ == "__main__":
    main()
