"""Benchmarks the runtime against PyTorch eager on a 4-layer 1024-wide MLP.

    PYTHONPATH=python /usr/bin/python3 python/tests/bench_runtime.py [--threads N]

Both do one full training step (forward, softmax cross-entropy, backward,
SGD momentum update) at batch 256 on the same number of threads; the
runtime additionally rounds every weight stream to f16 as the cluster does.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runtime_models as M  # noqa: E402


def best_of(fn, reps):
    fn()  # warm up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--stream-dtype", default="f16")
    ap.add_argument("--only", choices=["runtime", "torch"],
                    help="time one side only (run the two in separate processes so their "
                         "thread pools do not compete)")
    args = ap.parse_args()

    import torch
    from wsc import _runtime as rt

    torch.set_num_threads(args.threads)
    rt.set_num_threads(args.threads)
    dims = [args.width] * (args.layers + 1)
    B = args.batch
    opt = M.sgd(lr=0.01, momentum=0.9)
    sb = M.mlp_ce(batch=B, dims=dims, stream_dtype=args.stream_dtype, optimizer=opt)
    session = rt.Session(sb.dumps())
    rng = np.random.default_rng(0)
    w = {}
    for l in range(args.layers):
        w[f"fc{l}.weight"] = (rng.standard_normal((dims[l + 1], dims[l])) / np.sqrt(dims[l])).astype(np.float32)
        w[f"fc{l}.bias"] = np.zeros(dims[l + 1], np.float32)
    session.load_weights(w)
    x = rng.standard_normal((B, dims[0])).astype(np.float32)
    y = rng.integers(0, dims[-1], B).astype(np.int64)

    rt_best = rt_med = t_best = t_med = float("nan")
    if args.only != "torch":
        rt_best, rt_med = best_of(lambda: session.step([x, y]), args.reps)

    master = {k: torch.tensor(v, requires_grad=True) for k, v in w.items()}
    topt = M.make_torch_optimizer(list(master.values()), opt)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    loss_fn = M.torch_mlp_ce(args.layers)

    def torch_step():
        loss = loss_fn(master, [tx, ty])
        loss.backward()
        topt.step()
        topt.zero_grad()

    if args.only != "runtime":
        t_best, t_med = best_of(torch_step, args.reps)
    print(f"threads {args.threads}  batch {B}  {args.layers}x{args.width} MLP")
    print(f"  wsc runtime  best {rt_best * 1e3:8.2f} ms  median {rt_med * 1e3:8.2f} ms")
    print(f"  torch eager  best {t_best * 1e3:8.2f} ms  median {t_med * 1e3:8.2f} ms")
    print(f"  ratio (runtime / torch, best) {rt_best / t_best:.2f}")


if __name__ == "__main__":
    main()
