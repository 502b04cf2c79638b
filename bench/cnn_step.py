"""Emulator vs PyTorch eager on torchvision CNNs (a training step).

    PYTHONPATH=python /usr/bin/python3 bench/cnn_step.py [--threads N] [--reps N]
        [--models resnet18 mobilenet_v2] [--image 32] [--batch 8]

Prints, for one full training step (forward, cross-entropy, backward, SGD
momentum update, weight streaming on one system, f32 streams), the
emulator's step time over PyTorch eager's on the same threads and the same
BLAS, and each side's peak resident set (its whole process: model, compile
and steps; /usr/bin/time -v's "Maximum resident set size"). Each side runs
in its own process so the thread pools do not compete; the two take their
timed steps in turns (steptime.both_sides), and the ratio is the median
over those rounds.
Random init, nothing downloaded; dropout off (p = 0) so both sides do the
same work.
"""
import argparse
import json

from steptime import (blas_core_env, both_sides, eager_step_seconds, median_seconds,
                      peak_rss_bytes, ratio_line)

MODELS = {
    "resnet18": lambda tv: tv.resnet18(num_classes=10),
    "mobilenet_v2": lambda tv: tv.mobilenet_v2(num_classes=10, dropout=0.0),
    "squeezenet1_1": lambda tv: tv.squeezenet1_1(num_classes=10, dropout=0.0),
}


def build(name, image, batch):
    import torch
    import torchvision.models as tv
    from torch import nn
    torch.manual_seed(0)
    model = MODELS[name](tv)
    x = torch.randn(batch, 3, image, image)
    y = torch.randint(0, 10, (batch,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return model, nn.CrossEntropyLoss(), opt, x, y


def measure(side, args):
    import torch
    torch.set_num_threads(args.threads)
    model, loss_fn, opt, x, y = build(args.model, args.image, args.batch)
    if side == "torch":
        return {"step_s": eager_step_seconds(model, loss_fn, opt, x, y, args.reps),
                "peak_rss_bytes": peak_rss_bytes()}
    import wsc
    from wsc import _runtime
    _runtime.set_num_threads(args.threads)
    prog = wsc.compile(model, loss_fn, opt, x, y, stream_dtype="f32", mode="weight_streaming")
    return {"step_s": median_seconds(lambda: prog.step(x, y), args.reps),
            "peak_rss_bytes": peak_rss_bytes()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"],
                    choices=sorted(MODELS))
    ap.add_argument("--image", type=int, default=32)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--side", choices=["torch", "wsc"], help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        args.threads = args.threads[0]
        print(json.dumps(measure(args.side, args)))
        return
    core_env, core = blas_core_env()
    print(f"OpenBLAS kernels: {core} (the same for both sides)")
    for name in args.models:
        for threads in args.threads:
            results = both_sides(__file__, ["--model", name, "--threads", str(threads),
                                            "--reps", str(args.reps), "--image",
                                            str(args.image), "--batch", str(args.batch)],
                                 threads, core_env)
            print(ratio_line(f"{name:14s} {args.image}x{args.image} batch {args.batch}, "
                             f"{threads} thread(s)", results))


if __name__ == "__main__":
    main()
