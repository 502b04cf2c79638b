"""Unstructured weight sparsity end to end (docs/Sparsity.md): wsc.compile
with magnitude-pruned masks, against the same model dense.

    PYTHONPATH=python /usr/bin/python3 bench/sparsity.py [--only cpu|sweep|rigl]

cpu    Wall-clock emulator training step of a 4-layer MLP 4096 wide at batch
       64 (weight streaming, f16 streams), 90% sparse against dense, and
       PyTorch eager training the dense model as a peer.
sweep  A GPT-style decoder in weight-streaming mode at sparsity 0, 0.5, 0.75,
       0.9 and 0.95: bytes streamed per step (weights in, gradients out)
       over dense, the modeled step time over dense (compute-bound: a large
       batch), and model-state memory as MemoryX stores it and in SAMO's
       compressed layout next to SAMO's formula 24 f phi + 2 phi.
rigl   The same decoder under RigL at 90% (wsc.sparse_schedule), updating
       every third step: per step the modeled time, bytes in (weights and
       gradient requests) and out, and what an update costs in fixed steps.

Modeled figures come from the runtime's timing model after real emulator
steps; only `cpu` is timed on the CPU.
"""
import argparse
import copy
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))

import torch  # noqa: E402
from torch import nn  # noqa: E402

import wsc  # noqa: E402
from steptime import median_seconds  # noqa: E402
from wsc.models import GPT, GPTConfig  # noqa: E402


def cpu(args):
    width, batch = 4096, 64
    torch.manual_seed(0)
    layers = []
    for _ in range(4):
        layers += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    x, y = torch.randn(batch, width), torch.randint(0, width, (batch,))
    times, kernels = {}, {}
    for sparsity in (0.0, 0.9):
        m = copy.deepcopy(model)
        masks = wsc.sparse.prune_magnitude(m, sparsity) if sparsity else None
        prog = wsc.compile(m, nn.CrossEntropyLoss(), torch.optim.SGD(m.parameters(), lr=0.01),
                           x, y, mode="weight_streaming", sparsity=masks)
        times[sparsity] = median_seconds(lambda: prog.step(x, y), args.repeat)
        sparse = prog.report()["last_step"].get("sparse") or {}
        kernels[sparsity] = (sparse.get("spmm", 0), sparse.get("sddmm", 0),
                             sparse.get("dense_fallbacks", 0))
    m = copy.deepcopy(model)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)

    def eager():
        opt.zero_grad()
        nn.functional.cross_entropy(m(x), y).backward()
        opt.step()
    peer = median_seconds(eager, args.repeat)
    spmm, sddmm, fallbacks = kernels[0.9]
    print(f"\nCPU: 4-layer MLP {width} wide, batch {batch}, weight streaming, f16 streams, "
          f"PyTorch on {torch.get_num_threads()} threads, median of {args.repeat} steps")
    print(f"  emulator, dense      : {times[0.0] * 1e3:8.1f} ms/step")
    print(f"  emulator, 90% sparse : {times[0.9] * 1e3:8.1f} ms/step   dense/sparse "
          f"{times[0.0] / times[0.9]:.2f}x   ({spmm} SpMM, {sddmm} SDDMM, "
          f"{fallbacks} dense fallbacks)")
    print(f"  PyTorch eager, dense : {peer * 1e3:8.1f} ms/step   eager/sparse emulator "
          f"{peer / times[0.9]:.2f}x")


def gpt_setup(batch):
    """The sweep's decoder, a batch of tokens and its LM loss."""
    config = GPTConfig(vocab=512, d=512, heads=8, seq=128, layers=2)
    torch.manual_seed(0)
    model = GPT(config)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, config.vocab, (batch, config.seq), generator=g)
    targets = torch.randint(0, config.vocab, (batch, config.seq), generator=g)

    def loss_fn(logits, t):
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), t.reshape(-1))

    return config, model, ids, targets, loss_fn


def sweep(args):
    batch = args.batch
    config, model, ids, targets, loss_fn = gpt_setup(batch)
    rows = []
    for sparsity in (0.0, 0.5, 0.75, 0.9, 0.95):
        m = copy.deepcopy(model)
        masks = wsc.sparse.prune_magnitude(m, sparsity) if sparsity else None
        prog = wsc.compile(m, loss_fn, torch.optim.AdamW(m.parameters(), lr=1e-3), ids, targets,
                           mode="weight_streaming", sparsity=masks)
        for _ in range(2):  # the second step is in steady state
            prog.step(ids, targets)
        step = prog.report()["last_step"]
        rows.append((sparsity, step, masks))
    dense = rows[0][1]
    print(f"\nSweep: GPT-style decoder d={config.d}, {config.layers} layers, seq {config.seq}, "
          f"batch {batch}, weight streaming, f16 streams, AdamW (modeled)")
    print("(in/dense: every weight stream; sparse/dense: the pruned weights' streams alone)")
    print(f"{'sparsity':>8} {'bytes in':>10} {'in/dense':>9} {'sparse/dense':>12} {'bytes out':>10} "
          f"{'out/dense':>9} {'step ms':>8} {'time/dense':>10} {'compute ms':>10} {'stream ms':>9}")
    for sparsity, step, _ in rows:
        # Only CSR streams count here; below ~50% sparsity they stream dense.
        params = (step.get("sparse") or {}).get("params", [])
        csr_dense = sum(p["dense_stream_bytes"] for p in params)
        pruned = sum(p["stream_bytes"] for p in params) / csr_dense if csr_dense else 1.0
        print(f"{sparsity:8.2f} {step['bytes_in']:10.3g} {step['bytes_in'] / dense['bytes_in']:9.3f} "
              f"{pruned:12.3f} "
              f"{step['bytes_out']:10.3g} {step['bytes_out'] / dense['bytes_out']:9.3f} "
              f"{step['time_s'] * 1e3:8.3f} {step['time_s'] / dense['time_s']:10.3f} "
              f"{step['compute_s'] * 1e3:10.3f} {step['stream_s'] * 1e3:9.3f}")
    print("\nModel state of the sparse parameters (bytes; phi parameters, f = nnz / phi):")
    print(f"{'sparsity':>8} {'phi':>10} {'as stored':>11} {'white paper':>11} {'SAMO':>11} "
          f"{'24f.phi+2phi':>12} {'SAMO saved':>10}")
    for sparsity, step, _ in rows[1:]:
        state = step["sparse"]["model_state"]
        phi, nnz = state["params"], state["nnz"]
        formula = 24 * nnz + 2 * phi
        print(f"{sparsity:8.2f} {phi:10d} {state['as_stored_bytes']:11.4g} "
              f"{state['white_paper_bytes']:11.4g} {state['samo_bytes']:11.4g} {formula:12.4g} "
              f"{1 - state['samo_bytes'] / state['samo_default_bytes']:10.1%}")


def rigl(args):
    from wsc.sparse_schedule import RigL
    batch = args.batch
    config, model, ids, targets, loss_fn = gpt_setup(batch)
    schedule = RigL(0.9, end_step=100, update_frequency=3, drop_fraction=0.3)
    prog = wsc.compile(model, loss_fn, torch.optim.AdamW(model.parameters(), lr=1e-3), ids,
                       targets, mode="weight_streaming", sparsity=schedule)
    print(f"\nRigL at 90%, updating after steps 2 and 5: GPT-style decoder d={config.d}, "
          f"batch {batch}, weight streaming, f16 streams, AdamW (modeled)")
    print(f"{'step':>4} {'update':>6} {'step ms':>8} {'bytes in':>10} {'request B':>10} "
          f"{'bytes out':>10} {'masks moved':>11}")
    times = []
    for t in range(6):
        before = prog.masks()
        prog.step(ids, targets)
        step = prog.report()["last_step"]
        times.append(step["time_s"])
        request = sum(p["request_bytes"] for p in step["sparse"]["params"])
        moved = sum(int((before[k] != m).sum()) // 2 for k, m in prog.masks().items())
        print(f"{t:4d} {'yes' if schedule.updates_at(t) else 'no':>6} {step['time_s'] * 1e3:8.3f} "
              f"{step['bytes_in']:10.3g} {request:10.3g} {step['bytes_out']:10.3g} {moved:11d}")
    # The update step's dense gradients leave after its compute, so the
    # next step absorbs their tail: count the pair against two fixed steps.
    fixed = times[1]
    extra = times[2] + times[3] - 2 * fixed
    print(f"An update (its step and the next) costs {extra * 1e3:.3f} ms more than two "
          f"fixed-mask steps: {extra / fixed:.2f} fixed steps, {extra / (100 * fixed):.1%} "
          f"of training when updating every 100 steps.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["cpu", "sweep", "rigl"])
    parser.add_argument("--repeat", type=int, default=3, help="cpu: timed steps per run")
    parser.add_argument("--batch", type=int, default=64, help="sweep, rigl: samples per batch")
    args = parser.parse_args()
    for name, fn in [("cpu", cpu), ("sweep", sweep), ("rigl", rigl)]:
        if args.only in (None, name):
            fn(args)


if __name__ == "__main__":
    main()
