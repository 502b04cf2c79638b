"""Sparse Linear layer (CSR weights) vs dense OpenBLAS, forward + backward.

    /usr/bin/python3 bench/sparse_spmm.py [--build-dir build] [--threads 1 2]
                                          [--reps 10] [--size 4096] [--batch 64]

Runs WSCSparseBench (unittests/Sparse/SpMMBench.cpp) once per thread count
and prints, for sparsity 0, 0.5, 0.75, 0.9 and 0.95 of a 4096x4096 layer at
batch 64, the median time of one forward + backward step with the emulator's
sparse kernels (y = x W^T, dx = dy W from the transposed view, dW at the
mask only) against three cblas_sgemm calls on the masked dense weight, their
ratio, and the weight stream's bytes (CSR: FP16 values, 16-bit indices,
4-byte row counts) over a dense FP16 stream. "+refresh" adds regathering the
transposed view's values after an update. Build the bench first:
`ninja -C build WSCSparseBench`.
"""
import argparse
import json
import os
import subprocess
import sys


def find_bench(build_dir):
    candidates = [build_dir] if build_dir else []
    candidates += [os.environ.get("WSC_BUILD_DIR", ""), "build", "build-sparse", "build-rt"]
    for d in candidates:
        path = os.path.join(d, "bin", "WSCSparseBench") if d else ""
        if path and os.access(path, os.X_OK):
            return path
    sys.exit("WSCSparseBench not found: build it (ninja -C BUILD WSCSparseBench) "
             "and pass --build-dir BUILD")


def run(bench, threads, args):
    cmd = [bench, "--json", "--threads", str(threads), "--reps", str(args.reps),
           "--size", str(args.size), "--batch", str(args.batch)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default="")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    bench = find_bench(args.build_dir)

    print(f"Linear {args.size}x{args.size}, batch {args.batch}: one forward + backward step, "
          f"median of {args.reps}")
    header = ("threads", "sparsity", "dense ms", "sparse ms", "dense/sparse",
              "+refresh", "stream/dense")
    print("{:>7} {:>8} {:>9} {:>9} {:>12} {:>9} {:>12}".format(*header))
    worst = None
    for threads in args.threads:
        for r in run(bench, threads, args):
            ratio = r["dense_s"] / r["sparse_s"]
            with_refresh = r["dense_s"] / (r["sparse_s"] + r["refresh_s"])
            print(f"{threads:>7} {r['sparsity']:>8.2f} {r['dense_s'] * 1e3:>9.2f} "
                  f"{r['sparse_s'] * 1e3:>9.2f} {ratio:>11.2f}x {with_refresh:>8.2f}x "
                  f"{r['stream_ratio']:>12.4f}")
            if abs(r["sparsity"] - 0.9) < 1e-9:
                worst = ratio if worst is None else min(worst, ratio)
    if worst is not None:
        print(f"at 90% sparsity the sparse step is {worst:.2f}x faster than dense BLAS "
              f"(target: at least 2x)")


if __name__ == "__main__":
    main()
