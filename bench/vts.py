"""Variable tensor shape: modeled and measured speedups (docs/VTS.md).

    PYTHONPATH=python /usr/bin/python3 bench/vts.py [--only figure7|cpu|table1]

figure7  Synthetic batches where every sample has the same valid fraction f
         (1.0 down to 0.1): modeled throughput of a BERT-style encoder,
         layer-pipelined (the paper's Figure 7 setting), against 1/f.
cpu      Wall-clock step time of the emulator with VTS on and off, for a
         4-layer transformer (hidden 512, seq 512) at 13% valid tokens, and
         PyTorch eager on the padded batch as a peer.
table1   The paper's Table 1 rows from synthetic length distributions
         (wsc.data): a GPT-style decoder on WMT14-like lengths (87% padding)
         and a BERT-style MLM encoder on OpenWebText-like lengths, with and
         without length bucketing (the same samples); modeled speedups next
         to the paper's 5x, 1.2x and 1.4x. Takes ~13 minutes on 2 cores.

Modeled figures come from the runtime's timing model after real emulator
steps (numerics included); only `cpu` is timed on the CPU.
"""
import argparse
import copy
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))

import torch  # noqa: E402

import wsc  # noqa: E402
from steptime import median_seconds  # noqa: E402
from vts_models import Decoder, Encoder, MaskedLM, MaskedLMLoss, right_padded  # noqa: E402


def compile_lm(model, batch, seq, vocab, vts):
    """Layer-pipelined training of a per-token LM model with MaskedLMLoss."""
    g = torch.Generator().manual_seed(0)
    ids, valid = right_padded([seq] * batch, seq, vocab, g)
    return wsc.compile(model, MaskedLMLoss(), torch.optim.SGD(model.parameters(), lr=0.01),
                       (ids, valid), (ids, valid.float()), mode="layer_pipelined",
                       stream_dtype="f32", vts=vts)


def modeled_step(prog, lengths, seq, vocab, g):
    """Modeled seconds of one step on a batch with these lengths."""
    ids, valid = right_padded(lengths, seq, vocab, g)
    prog.step((ids, valid), (ids, valid.float()))
    return prog.report()["last_step"]["time_s"]


def compile_encoder(model, batch, seq, vocab, valid_fraction, grid):
    """Layer-pipelined training of the classifying Encoder, VTS on, regions
    sized for samples with `valid_fraction` of valid tokens, on a CS-2
    scaled down to `grid` PEs."""
    g = torch.Generator().manual_seed(0)
    ids, valid = right_padded([seq] * batch, seq, vocab, g)
    labels = torch.zeros(batch, dtype=torch.long)
    return wsc.compile(model, torch.nn.CrossEntropyLoss(),
                       torch.optim.SGD(model.parameters(), lr=0.01), (ids, valid), (labels,),
                       mode="layer_pipelined", stream_dtype="f32", vts=True,
                       valid_fraction=valid_fraction, grid=grid)


def figure7(args):
    seq, batch, vocab = 128, args.figure7_batch, 128
    labels = (torch.zeros(batch, dtype=torch.long),)
    base = None
    grid = args.figure7_grid
    print(f"\nFigure 7: every sample has valid fraction f (encoder d=128, seq {seq}, "
          f"batch {batch}, layer-pipelined on a {grid[0]}x{grid[1]}-PE wafer, modeled; "
          f"compiled for f)")
    print(f"{'f':>5} {'samples/s':>12} {'speedup':>8} {'1/f':>6} {'speedup*f':>10}")
    for f in [1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]:
        length = max(1, round(f * seq))
        torch.manual_seed(0)
        prog = compile_encoder(Encoder(vocab=vocab, d=128, heads=4, seq=seq, layers=2), batch,
                               seq, vocab, length / seq, grid)
        g = torch.Generator().manual_seed(1)
        for _ in range(2):  # the second step is in steady state
            ids, valid = right_padded([length] * batch, seq, vocab, g)
            prog.step((ids, valid), labels)
        t = prog.report()["last_step"]["time_s"]
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
        times[vts] = median_seconds(lambda: prog.step((ids, valid), (labels,)), args.repeat)
    m = copy.deepcopy(model)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)

    def eager_step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(m(ids, valid), labels).backward()
        opt.step()
    eager = median_seconds(eager_step, args.repeat)
    print(f"  emulator, VTS off : {times[False]:8.3f} s/step")
    print(f"  emulator, VTS on  : {times[True]:8.3f} s/step   speedup {times[False] / times[True]:.2f}x")
    print(f"  PyTorch eager (padded): {eager:8.3f} s/step   emulator VTS on / eager "
          f"{times[True] / eager:.2f}x")


def lm_speedup(make_model, lengths_batches, seq, vocab, batch):
    """Modeled step time with VTS off over on, summed over the batches."""
    times = {}
    for vts in (False, True):
        torch.manual_seed(0)
        prog = compile_lm(make_model(), batch, seq, vocab, vts)
        g = torch.Generator().manual_seed(0)
        times[vts] = sum(modeled_step(prog, lengths, seq, vocab, g) for lengths in lengths_batches)
    return times[False] / times[True]


def table1(args):
    from wsc.data import LengthBucketSampler, owt_like_lengths, valid_fraction, wmt_like_lengths
    batch, vocab, steps = args.batch, 256, args.batches
    rows = []

    def split(lengths):
        return [lengths[i * batch:(i + 1) * batch].tolist() for i in range(steps)]

    wmt = wmt_like_lengths(batch * steps, seq=256, seed=0)
    decoder = lambda: Decoder(vocab=vocab, d=args.wmt_d, heads=8, seq=256, layers=2)  # noqa: E731
    rows.append(("Transformer, WMT14-like (wmt_like_lengths, seq 256)", valid_fraction(wmt, 256),
                 lm_speedup(decoder, split(wmt), 256, vocab, batch), "5x"))
    # Both BERT rows train on the same samples: those the bucketing sampler
    # keeps (it drops each bucket's short last batch), in random batches and
    # in its length-bucketed batches.
    owt = owt_like_lengths(batch * steps * 2, seq=512, seed=0)
    sampler = LengthBucketSampler(owt, batch, num_buckets=4, seed=0, drop_last=True)
    bucketed = [owt[idx] for idx in sampler]
    kept = torch.cat(bucketed)
    shuffled = kept[torch.randperm(len(kept), generator=torch.Generator().manual_seed(0))]
    bert = lambda: MaskedLM(vocab=vocab, d=args.bert_d, heads=8, seq=512, layers=2)  # noqa: E731
    random_batches = [b.tolist() for b in shuffled.split(batch)]
    rows.append(("BERT MLM, OWT-like (owt_like_lengths, seq 512)", valid_fraction(kept, 512),
                 lm_speedup(bert, random_batches, 512, vocab, batch), "1.2x"))
    rows.append(("BERT MLM, OWT-like, length bucketing", valid_fraction(kept, 512),
                 lm_speedup(bert, [b.tolist() for b in bucketed], 512, vocab, batch), "1.4x"))
    print(f"\nTable 1 (layer-pipelined, modeled, 2 layers, batches of {batch}; WMT: d={args.wmt_d}, "
          f"{steps} batches; BERT: d={args.bert_d}, {len(bucketed)} batches)")
    print(f"{'dataset':52} {'valid':>6} {'1/valid':>8} {'wsc':>6} {'paper':>6}")
    for name, f, s, paper in rows:
        print(f"{name:52} {f:6.1%} {1 / f:8.2f} {s:5.2f}x {paper:>6}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["figure7", "cpu", "table1"])
    parser.add_argument("--repeat", type=int, default=2, help="cpu: timed steps per run")
    parser.add_argument("--batches", type=int, default=4, help="table1: batches per row")
    parser.add_argument("--batch", type=int, default=64, help="table1: samples per batch")
    parser.add_argument("--figure7-batch", type=int, default=256, help="figure7: samples per batch")
    parser.add_argument("--figure7-grid", type=lambda t: tuple(int(n) for n in t.split("x")),
                        default=(64, 64), help="figure7: the wafer's PE grid, WxH")
    parser.add_argument("--wmt-d", type=int, default=512, help="table1: hidden size, WMT row")
    parser.add_argument("--bert-d", type=int, default=256, help="table1: hidden size, BERT rows")
    args = parser.parse_args()
    for name, fn in [("figure7", figure7), ("cpu", cpu), ("table1", table1)]:
        if args.only in (None, name):
            fn(args)


if __name__ == "__main__":
    main()
