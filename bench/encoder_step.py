"""Emulator vs PyTorch eager on a 4-layer transformer encoder (a training step).

    PYTHONPATH=python /usr/bin/python3 bench/encoder_step.py [--threads 1 2] [--reps N]

The encoder of `bench/vts.py --only cpu` (hidden 512, 8 heads, sequence
512, batch 4; python/tests/vts_models.py) with VTS off, so both sides do
the same padded work: forward, cross-entropy, backward and an SGD update,
weight streaming on one system with f32 streams. Prints the emulator's
step time over PyTorch eager's on the same threads and the same BLAS, and
each side's peak resident set (its whole process). Each side runs in its
own process so the thread pools do not compete.
"""
import argparse
import json
import os
import sys

from steptime import blas_core_env, both_sides, median_seconds, peak_rss_bytes, ratio_line

SEQ, BATCH, VOCAB, HIDDEN, HEADS, LAYERS = 512, 4, 1024, 512, 8, 4


def build():
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))
    from vts_models import Encoder, right_padded
    torch.manual_seed(0)
    model = Encoder(vocab=VOCAB, d=HIDDEN, heads=HEADS, seq=SEQ, layers=LAYERS)
    g = torch.Generator().manual_seed(0)
    lengths = torch.full((BATCH,), round(0.13 * SEQ))
    ids, valid = right_padded(lengths, SEQ, VOCAB, g)
    labels = torch.zeros(BATCH, dtype=torch.long)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    return model, opt, (ids, valid), labels


def measure(side, args):
    import torch
    torch.set_num_threads(args.threads)
    model, opt, inputs, labels = build()
    loss_fn = torch.nn.CrossEntropyLoss()
    if side == "torch":
        def step():
            opt.zero_grad()
            loss_fn(model(*inputs), labels).backward()
            opt.step()
        return {"step_s": median_seconds(step, args.reps), "peak_rss_bytes": peak_rss_bytes()}
    import wsc
    from wsc import _runtime
    _runtime.set_num_threads(args.threads)
    prog = wsc.compile(model, loss_fn, opt, inputs, (labels,), mode="weight_streaming",
                       stream_dtype="f32", vts=False)
    return {"step_s": median_seconds(lambda: prog.step(inputs, (labels,)), args.reps),
            "peak_rss_bytes": peak_rss_bytes()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--side", choices=["torch", "wsc"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        args.threads = args.threads[0]
        print(json.dumps(measure(args.side, args)))
        return
    core_env, core = blas_core_env()
    print(f"OpenBLAS kernels: {core} (the same for both sides)")
    for threads in args.threads:
        results = both_sides(__file__, ["--threads", str(threads), "--reps", str(args.reps)],
                             threads, core_env)
        print(ratio_line(f"encoder {LAYERS}x{HIDDEN}, seq {SEQ}, batch {BATCH}, VTS off, "
                         f"{threads} thread(s)", results))


if __name__ == "__main__":
    main()
