"""Checkpoint write throughput vs a plain sequential write of as many bytes.

    PYTHONPATH=python /usr/bin/python3 bench/checkpoint_write.py [--dir /work]
                                                                 [--gib 1.2] [--reps 3]

Compiles a one-layer model with AdamW whose weights and optimizer state make
a checkpoint of about --gib GiB (weights + exp_avg + exp_avg_sq), takes one
step, then, --reps times, times Program.save (capture of the state, XXH64 of
every byte, the atomic write: temp file, fsync, rename, directory fsync) and
`dd if=/dev/zero bs=4M conv=fsync` of the same number of bytes, into a temp
directory under --dir that is deleted afterwards. Prints each rep's MB/s and
the ratio checkpoint / dd (target >= 0.8), and the median ratio last.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import torch
from torch import nn

import wsc


def build(gib):
    # 3 FP32 words per weight (weight, exp_avg, exp_avg_sq).
    out_features = 8192
    in_features = max(1024, int(gib * 2**30 / (12 * out_features)))
    torch.manual_seed(0)
    model = nn.Linear(in_features, out_features, bias=False)
    x, y = torch.randn(4, in_features), torch.randn(4, out_features)
    prog = wsc.compile(model, nn.MSELoss(), torch.optim.AdamW(model.parameters(), lr=1e-3),
                       x, y, mode="weight_streaming", stream_dtype="f32")
    del model
    prog.step(x, y)
    return prog


def timed(f):
    start = time.monotonic()
    f()
    return time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/work", help="where the temp directory goes")
    ap.add_argument("--gib", type=float, default=1.2, help="checkpoint size, GiB (>= 1)")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    free = shutil.disk_usage(args.dir).free
    if free < 3 * args.gib * 2**30:
        sys.exit(f"{args.dir}: {free / 2**30:.1f} GiB free, need {3 * args.gib:.1f}")
    prog = build(args.gib)
    work = tempfile.mkdtemp(prefix="wsc-checkpoint-bench-", dir=args.dir)
    try:
        ckpt, plain = os.path.join(work, "c.safetensors"), os.path.join(work, "dd.bin")
        ratios = []
        for rep in range(args.reps):
            ours = timed(lambda: prog.save(ckpt))
            size = os.path.getsize(ckpt)
            blocks = -(-size // (4 << 20))
            dd = timed(lambda: subprocess.run(
                ["dd", "if=/dev/zero", f"of={plain}", "bs=4M", f"count={blocks}",
                 "conv=fsync", "status=none"], check=True))
            dd_bytes = blocks * (4 << 20)
            ours_rate, dd_rate = size / ours / 1e6, dd_bytes / dd / 1e6
            ratios.append(ours_rate / dd_rate)
            print(f"rep {rep}: checkpoint {size / 2**30:.2f} GiB in {ours:.2f} s "
                  f"({ours_rate:.0f} MB/s); dd conv=fsync {dd_bytes / 2**30:.2f} GiB in "
                  f"{dd:.2f} s ({dd_rate:.0f} MB/s); ratio {ratios[-1]:.2f}", flush=True)
            os.unlink(ckpt)
            os.unlink(plain)
        print(f"checkpoint write / dd conv=fsync throughput: median ratio "
              f"{statistics.median(ratios):.2f} (target >= 0.8)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
