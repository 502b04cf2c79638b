"""Emulator training step of a 90%-sparse MLP (CSR streams) against the same MLP dense.

    /usr/bin/python3 bench/sparse_step.py [--build-dir build] [--threads 1 2]
        [--steps 4] [--width 4096] [--layers 4] [--batch 64] [--sparsity 0.9]

Builds a Linear/ReLU MLP with cross-entropy by hand (python/tests/
runtime_models.mlp_ce: SGD with momentum, f16 streams, transposed backward
streams), once dense and once with every weight sparse (csr weight streams,
mask-order gradient streams), writes magnitude-pruned weights (so the sparse
run takes its masks from their non-zeros), and runs wsc-run on both. Prints
the median emulator wall time of a training step (the first step left out),
dense / sparse, the sparse kernels the emulator ran, and the modeled step
times. Issue #5's target: sparse at least 2x faster than dense at 4096 wide,
batch 64, 90% sparsity. Needs wsc-run (ninja -C BUILD wsc-run) and numpy.
"""
import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "unittests", "Runtime", "Inputs"))

import runtime_models as M  # noqa: E402
from generate import sparse  # noqa: E402


def find_tool(build_dir):
    for d in [build_dir, os.environ.get("WSC_BUILD_DIR", ""), "build", "build-sparse", "build-rt"]:
        path = os.path.join(d, "bin", "wsc-run") if d else ""
        if path and os.access(path, os.X_OK):
            return path
    sys.exit("wsc-run not found: build it and pass --build-dir BUILD")


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        data = np.ascontiguousarray(a).tobytes()
        dtype = {np.float32: "F32", np.int64: "I64"}[a.dtype.type]
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def prune(w, sparsity):
    """Zeroes the smallest-magnitude `sparsity` of w."""
    k = int(round(w.size * sparsity))
    flat = np.abs(w).ravel()
    cut = np.partition(flat, k)[k] if k < w.size else np.inf
    return np.where(np.abs(w) >= cut, w, 0).astype(np.float32)


def run(tool, schedule, files, steps, threads, workdir, tag):
    report = os.path.join(workdir, f"report_{tag}_{threads}.json")
    cmd = [tool, schedule, "--weights", files["weights"], "--data", files["data"], "--steps",
           str(steps), "--threads", str(threads), "--report", report, "--quiet"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(report) as f:
        return json.load(f)["steps"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default="")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--sparsity", type=float, default=0.9)
    args = ap.parse_args()
    tool = find_tool(args.build_dir)
    dims = (args.width,) * (args.layers + 1)
    weights = [f"fc{l}.weight" for l in range(args.layers)]
    model = lambda: M.mlp_ce(batch=args.batch, dims=dims, stream_dtype="f16",
                             optimizer=M.sgd(lr=0.01, momentum=0.9))

    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as workdir:
        schedules = {"dense": os.path.join(workdir, "dense.json"),
                     "sparse": os.path.join(workdir, "sparse.json")}
        with open(schedules["dense"], "w") as f:
            json.dump(model().to_json(), f)
        with open(schedules["sparse"], "w") as f:
            json.dump(sparse(model(), weights, density=1 - args.sparsity), f)
        tensors = {}
        for l in range(args.layers):
            w = rng.standard_normal((dims[l + 1], dims[l]), dtype=np.float32) / np.sqrt(dims[l])
            tensors[f"fc{l}.weight"] = prune(w, args.sparsity)
            tensors[f"fc{l}.bias"] = np.zeros(dims[l + 1], np.float32)
        files = {"weights": os.path.join(workdir, "w.safetensors"),
                 "data": os.path.join(workdir, "d.safetensors")}
        write_safetensors(files["weights"], tensors)
        write_safetensors(files["data"], {
            "input0": rng.standard_normal((args.batch, dims[0]), dtype=np.float32),
            "label0": rng.integers(0, dims[-1], args.batch).astype(np.int64)})

        print(f"MLP {args.layers} x {args.width}, batch {args.batch}, {args.sparsity:.0%} sparse: "
              f"median emulator wall of steps 1..{args.steps - 1}")
        print("{:>7} {:>9} {:>10} {:>12} {:>5} {:>5} {:>9} {:>14} {:>15}".format(
            "threads", "dense ms", "sparse ms", "dense/sparse", "spmm", "sddmm", "fallback",
            "modeled dense", "modeled sparse"))
        for threads in args.threads:
            res = {tag: run(tool, path, files, args.steps, threads, workdir, tag)
                   for tag, path in schedules.items()}
            wall = {tag: statistics.median(s["wall_s"] for s in steps[1:])
                    for tag, steps in res.items()}
            sp = res["sparse"][-1]["sparse"]
            print("{:>7} {:>9.1f} {:>10.1f} {:>11.2f}x {:>5} {:>5} {:>9} {:>11.3f} ms {:>12.3f} ms"
                  .format(threads, 1e3 * wall["dense"], 1e3 * wall["sparse"],
                          wall["dense"] / wall["sparse"], sp["spmm"], sp["sddmm"],
                          sp["dense_fallbacks"], 1e3 * res["dense"][-1]["time_s"],
                          1e3 * res["sparse"][-1]["time_s"]))


if __name__ == "__main__":
    main()
