"""Emulator vs PyTorch eager on a 4-layer, 1024-wide MLP at batch 256.

    PYTHONPATH=python /usr/bin/python3 bench/mlp_step.py [--threads N] [--reps N]

Prints, for one full training step (forward, cross-entropy, backward, SGD
momentum update), the wsc emulator's step time over PyTorch eager's on the
same threads and the same BLAS (Debian's torch uses the system libblas,
i.e. OpenBLAS), and the time to export and compile the step. Each side runs
in its own process so the two thread pools do not compete for the cores;
the two take their timed steps in turns (steptime.both_sides), and the
ratio is the median over those rounds.
"""
import argparse
import json
import sys
import time

from steptime import (blas_core_env, both_sides, eager_step_seconds, median_seconds,
                      peak_rss_bytes)


def build(width, layers, batch):
    import torch
    from torch import nn
    torch.manual_seed(0)
    mods = []
    for i in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*mods[:-1])
    x = torch.randn(batch, width)
    y = torch.randint(0, width, (batch,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return model, nn.CrossEntropyLoss(), opt, x, y


def measure(side, args):
    import torch
    torch.set_num_threads(args.threads)
    model, loss_fn, opt, x, y = build(args.width, args.layers, args.batch)
    if side == "torch":
        return {"step_s": eager_step_seconds(model, loss_fn, opt, x, y, args.reps),
                "peak_rss_bytes": peak_rss_bytes()}
    import wsc
    from wsc import _runtime
    _runtime.set_num_threads(args.threads)
    t0 = time.perf_counter()
    prog = wsc.compile(model, loss_fn, opt, x, y, stream_dtype=args.stream_dtype)
    compile_s = time.perf_counter() - t0
    return {"step_s": median_seconds(lambda: prog.step(x, y), args.reps), "compile_s": compile_s,
            "modeled_step_s": prog.report()["last_step"]["time_s"],
            "peak_rss_bytes": peak_rss_bytes()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--stream-dtype", default="f16")
    ap.add_argument("--side", choices=["torch", "wsc"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        print(json.dumps(measure(args.side, args)))
        return
    core_env, core = blas_core_env()
    results = both_sides(__file__, sys.argv[1:], args.threads, core_env)
    t, w = results["torch"], results["wsc"]
    print(f"{args.layers}x{args.width} MLP, batch {args.batch}, {args.threads} thread(s), "
          f"{args.stream_dtype} streams, OpenBLAS kernels {core}")
    print(f"  PyTorch eager step    {t['step_s'] * 1e3:8.2f} ms")
    print(f"  wsc emulator step     {w['step_s'] * 1e3:8.2f} ms")
    print(f"  emulator / PyTorch    {results['ratio']:8.2f}   (target <= 1.0; the median of "
          f"{args.reps} rounds, one step each side)")
    # The 2 s target is the 4x1024 MLP's; a 4096-wide one moves 16x the weights.
    default = (args.width, args.layers, args.batch) == (1024, 4, 256)
    print(f"  export + compile      {w['compile_s']:8.2f} s"
          + ("    (target <= 2 s, cold process)" if default else ""))
    print(f"  modeled CS-2 step     {w['modeled_step_s'] * 1e3:8.3f} ms")
    rss_t, rss_w = t["peak_rss_bytes"] / 2**20, w["peak_rss_bytes"] / 2**20
    print(f"  peak RSS (whole side) {rss_t:6.0f} MB eager, {rss_w:6.0f} MB emulator: "
          f"{rss_w / rss_t:4.2f}x   (target <= 1.5)")


if __name__ == "__main__":
    main()
