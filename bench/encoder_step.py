"""Emulator vs PyTorch eager on transformer encoders (a training step).

    PYTHONPATH=python /usr/bin/python3 bench/encoder_step.py [--threads 1 2] [--reps N]
        [--models encoder torch_encoder]

encoder        the encoder of `bench/vts.py --only cpu` (hidden 512, 8 heads,
               4 layers, sequence 512, batch 4; python/tests/vts_models.py)
               with VTS off, so both sides do the same padded work;
torch_encoder  torch.nn's own nn.TransformerEncoder (hidden 256, 4 heads,
               feed-forward 1024, 4 layers, sequence 128, batch 8) with an
               embedding in front and a mean-pooled classifier after.

Each is one training step: forward, cross-entropy, backward and an SGD
update, weight streaming on one system with f32 streams. Prints the
emulator's step time over PyTorch eager's on the same threads and the
same BLAS, and each side's peak resident set (its whole process). Each
side runs in its own process so the thread pools do not compete; the two
take their timed steps in turns (steptime.both_sides), and the ratio is
the median over those rounds.
"""
import argparse
import json
import os
import sys

from steptime import blas_core_env, both_sides, median_seconds, peak_rss_bytes, ratio_line


def vts_encoder():
    """(model, inputs, labels, compile options)."""
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))
    from vts_models import Encoder, right_padded
    seq, batch, vocab, hidden, heads, layers = 512, 4, 1024, 512, 8, 4
    torch.manual_seed(0)
    model = Encoder(vocab=vocab, d=hidden, heads=heads, seq=seq, layers=layers)
    g = torch.Generator().manual_seed(0)
    ids, valid = right_padded(torch.full((batch,), round(0.13 * seq)), seq, vocab, g)
    return model, (ids, valid), torch.zeros(batch, dtype=torch.long), {"vts": False}


def torch_encoder():
    import torch
    from torch import nn
    seq, batch, vocab, hidden, heads, ff, layers, classes = 128, 8, 1024, 256, 4, 1024, 4, 10

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.encoder = nn.TransformerEncoder(
                nn.TransformerEncoderLayer(hidden, heads, ff, dropout=0.0, batch_first=True),
                layers, enable_nested_tensor=False)
            self.head = nn.Linear(hidden, classes)

        def forward(self, ids):
            return self.head(self.encoder(self.embed(ids)).mean(dim=1))

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, vocab, (batch, seq), generator=g)
    labels = torch.randint(0, classes, (batch,), generator=g)
    return Classifier(), (ids,), labels, {}


MODELS = {  # name: (label, builder)
    "encoder": ("encoder 4x512, seq 512, batch 4, VTS off", vts_encoder),
    "torch_encoder": ("nn.TransformerEncoder 4x256, seq 128, batch 8", torch_encoder),
}


def measure(side, args):
    import torch
    torch.set_num_threads(args.threads)
    model, inputs, labels, options = MODELS[args.model][1]()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
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
                       stream_dtype="f32", **options)
    return {"step_s": median_seconds(lambda: prog.step(inputs, (labels,)), args.reps),
            "peak_rss_bytes": peak_rss_bytes()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--models", nargs="+", default=sorted(MODELS), choices=sorted(MODELS))
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
        label = MODELS[name][0]
        for threads in args.threads:
            results = both_sides(__file__, ["--model", name, "--threads", str(threads),
                                            "--reps", str(args.reps)], threads, core_env)
            print(ratio_line(f"{label}, {threads} thread(s)", results), flush=True)


if __name__ == "__main__":
    main()
