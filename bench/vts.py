"""Variable tensor shape: modeled and measured speedups (docs/VTS.md).

    PYTHONPATH=python /usr/bin/python3 bench/vts.py [--only figure7|cpu|table1]

figure7  Synthetic batches where every sample has the same valid fraction f
         (1.0 down to 0.1): modeled throughput of a BERT-style encoder,
         layer-pipelined (the paper's Figure 7 setting), against 1/f.
cpu      Wall-clock step time of the emulator with VTS on and off, for a
         4-layer transformer (hidden 512, seq 512) at 13% valid tokens, and
         PyTorch eager on the padded batch as a peer.
table1   The paper's Table 1 rows from synthetic length distributions
         (wsc.data): WMT14-like (87% padding) and OpenWebText-like for BERT,
         with and without length bucketing; modeled speedups next to the
         paper's 5x, 1.2x and 1.4x.

Modeled figures come from the runtime's timing model after real emulator
steps (numerics included); only `cpu` is timed on the CPU.
"""
import argparse
import copy
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))

import torch  # noqa: E402

import wsc  # noqa: E402
from vts_models import Encoder, right_padded  # noqa: E402


def compile_encoder(model, batch, seq, vocab, vts, mode):
    g = torch.Generator().manual_seed(0)
    ids, valid = right_padded([seq] * batch, seq, vocab, g)
    labels = torch.zeros(batch, dtype=torch.long)
    model = copy.deepcopy(model)
    return wsc.compile(model, torch.nn.CrossEntropyLoss(),
                       torch.optim.SGD(model.parameters(), lr=0.01), (ids, valid), (labels,),
                       mode=mode, stream_dtype="f32", vts=vts)


def modeled_step(prog, lengths, seq, vocab, steps=2):
    """Modeled seconds per step (the last of `steps`, in steady state)."""
    g = torch.Generator().manual_seed(1)
    for _ in range(steps):
        ids, valid = right_padded(lengths, seq, vocab, g)
        prog.step((ids, valid), (torch.zeros(len(lengths), dtype=torch.long),))
    return prog.report()["last_step"]["time_s"]


def figure7(args):
    seq, batch, vocab = 128, 256, 128
    torch.manual_seed(0)
    model = Encoder(vocab=vocab, d=128, heads=4, seq=seq, layers=2)
    prog = compile_encoder(model, batch, seq, vocab, True, "layer_pipelined")
    base = None
    print(f"\nFigure 7: every sample has valid fraction f (encoder d=128, seq {seq}, "
          f"batch {batch}, layer-pipelined, modeled)")
    print(f"{'f':>5} {'samples/s':>12} {'speedup':>8} {'1/f':>6} {'speedup*f':>10}")
    for f in [1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]:
        length = max(1, round(f * seq))
        t = modeled_step(prog, [length] * batch, seq, vocab)
        base = base or t
        speedup = base / t
        print(f"{length / seq:5.2f} {batch / t:12.0f} {speedup:8.2f} {seq / length:6.2f} "
              f"{speedup * length / seq:10.3f}")


def cpu(args):
    seq, batch, vocab, d = 512, 4, 1024, 512
    torch.manual_seed(0)
    model = Encoder(vocab=vocab, d=d, heads=8, seq=seq, layers=4)
    g = torch.Generator().manual_seed(0)
    lengths = torch.full((batch,), round(0.13 * seq))
    lengths[0] = round(0.13 * seq * 1.5)
    lengths[1] = round(0.13 * seq * 0.5)
    ids, valid = right_padded(lengths, seq, vocab, g)
    labels = torch.zeros(batch, dtype=torch.long)
    print(f"\nCPU: 4-layer encoder, hidden {d}, seq {seq}, batch {batch}, "
          f"{float(valid.float().mean()):.1%} valid tokens, weight streaming, f32")
    times = {}
    for vts in (False, True):
        m = copy.deepcopy(model)
        prog = wsc.compile(m, torch.nn.CrossEntropyLoss(), torch.optim.SGD(m.parameters(), lr=0.01),
                           (ids, valid), (labels,), mode="weight_streaming", stream_dtype="f32",
                           vts=vts)
        prog.step((ids, valid), (labels,))  # warm up
        start = time.perf_counter()
        for _ in range(args.repeat):
            prog.step((ids, valid), (labels,))
        times[vts] = (time.perf_counter() - start) / args.repeat
    m = copy.deepcopy(model)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    start = time.perf_counter()
    for _ in range(args.repeat):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(m(ids, valid), labels).backward()
        opt.step()
    eager = (time.perf_counter() - start) / args.repeat
    print(f"  emulator, VTS off : {times[False]:8.3f} s/step")
    print(f"  emulator, VTS on  : {times[True]:8.3f} s/step   speedup {times[False] / times[True]:.2f}x")
    print(f"  PyTorch eager (padded): {eager:8.3f} s/step   emulator VTS on / eager "
          f"{times[True] / eager:.2f}x")


def table1(args):
    from wsc.data import LengthBucketSampler, owt_like_lengths, valid_fraction, wmt_like_lengths
    rows = []
    batch, vocab, steps = 32, 128, args.batches

    def speedup(lengths_batches, seq):
        torch.manual_seed(0)
        model = Encoder(vocab=vocab, d=64, heads=4, seq=seq, layers=2)
        on = compile_encoder(model, batch, seq, vocab, True, "layer_pipelined")
        off = compile_encoder(model, batch, seq, vocab, False, "layer_pipelined")
        t_on = sum(modeled_step(on, b, seq, vocab, steps=1) for b in lengths_batches)
        t_off = sum(modeled_step(off, b, seq, vocab, steps=1) for b in lengths_batches)
        return t_off / t_on

    wmt = wmt_like_lengths(batch * steps, seq=256, seed=0)
    batches = [wmt[i * batch:(i + 1) * batch].tolist() for i in range(steps)]
    rows.append(("Transformer on WMT14-like (wmt_like_lengths, seq 256)",
                 valid_fraction(wmt, 256), speedup(batches, 256), "5x"))
    owt = owt_like_lengths(batch * steps * 8, seq=512, seed=0)
    random_batches = [owt[i * batch:(i + 1) * batch].tolist() for i in range(steps)]
    rows.append(("BERT on OWT-like (owt_like_lengths, seq 512)",
                 valid_fraction(owt[:batch * steps], 512), speedup(random_batches, 512), "1.2x"))
    sampler = LengthBucketSampler(owt, batch, seed=0, drop_last=True)
    bucketed = [owt[idx].tolist() for _, idx in zip(range(steps), iter(sampler))]
    rows.append(("BERT on OWT-like, length bucketing", valid_fraction(owt, 512),
                 speedup(bucketed, 512), "1.4x"))
    print(f"\nTable 1 (layer-pipelined, modeled, {steps} batches of {batch})")
    print(f"{'dataset':58} {'valid':>6} {'1/valid':>8} {'wsc':>6} {'paper':>6}")
    for name, f, s, paper in rows:
        print(f"{name:58} {f:6.1%} {1 / f:8.2f} {s:5.2f}x {paper:>6}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["figure7", "cpu", "table1"])
    parser.add_argument("--repeat", type=int, default=2, help="cpu: timed steps per run")
    parser.add_argument("--batches", type=int, default=4, help="table1: batches per row")
    args = parser.parse_args()
    for name, fn in [("figure7", figure7), ("cpu", cpu), ("table1", table1)]:
        if args.only in (None, name):
            fn(args)


if __name__ == "__main__":
    main()
