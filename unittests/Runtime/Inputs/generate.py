"""Regenerates the hand-made schedules in this directory.

    python3 unittests/Runtime/Inputs/generate.py

The schedules are written op by op with python/tests/schedule_builder.py
(no compiler involved); the generated JSON is checked in so the C++ tests
need no Python.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "python", "tests"))

import runtime_models as M  # noqa: E402


def write(name, sb):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(sb.dumps())
        f.write("\n")


def write_doc(name, doc):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(json.dumps(doc, separators=(",", ":")))
        f.write("\n")


def mlp_lp_twins():
    """A 2-layer MLP with cross-entropy in weight-streaming form (f32,
    row-major backward streams) and its layer-pipelined twin."""
    mom = M.sgd(lr=0.1, momentum=0.9)
    ws = M.mlp_ce(batch=6, dims=(4, 5, 3), optimizer=mom, backward_weights="row_major")
    regions = {"fc0": (0, 0, 12, 6), "fc1": (20, 8, 10, 6), "loss": (40, 8, 4, 2)}
    lp = {"fc0.fwd": ("matmul", [1, 4, 5], [2, 2, 4], 400.0, 96),
          "fc1.fwd": ("matmul", [1, 5, 3], [2, 2, 3], 300.0, 80),
          "loss": ("eltwise", [3, 10], [2, 2], 100.0, 16),
          "fc1.bwd": ("matmul", [1, 5, 3], [2, 2, 3], 600.0, 80),
          "fc0.bwd": ("matmul", [1, 4, 5], [2, 2, 4], 500.0, 96)}
    return ws, M.layer_pipelined(ws, regions, lp)


def sparse(sb, params, density=0.25):
    """Makes `params` (2-D weights) sparse in schedule `sb`: "sparsity" on
    the params, csr weight streams, mask-format gradient streams; kernels
    reading or computing them get cost.density (the compiler's factor)."""
    doc = sb.to_json()
    for p in doc["params"]:
        if p["name"] in params:
            p["sparsity"] = {"density": density, "source": "magnitude"}
    sparse_values = set()
    for st in doc["steps"]:
        if st["op"] == "weight_stream" and st["param"] in params:
            st["format"] = "csr"
            sparse_values.add(st["result"])
        elif st["op"] == "gradient_stream" and st["param"] in params:
            st["format"] = "mask"
            sparse_values.add(st["operand"])
    for st in doc["steps"]:
        if st["op"] == "kernel" and sparse_values & set(st["operands"] + st["results"]):
            st["cost"]["density"] = density
    return doc


def linear_mse_tgrad(batch=6, in_f=20, out_f=12):
    """One Linear layer + MSE whose weight gradient goes back transposed
    (dW^T = x^T dy, gradient_stream order transposed)."""
    sb = M.ScheduleBuilder("train", 1, batch, "f32")
    sb.param("fc.weight", [out_f, in_f], M.sgd(lr=0.1, momentum=0.9))
    x = sb.input("input0", [batch, in_f])
    t = sb.input("target0", [batch, out_f], role="label")
    w = sb.weight_stream("fc.weight")
    y = sb.kernel("fc.fwd", "fc", "forward", [x, w],
                  lambda k, x, w: k.matmul(x, w, [M.dim(0), M.dim(2)], [M.dim(1), M.dim(2)],
                                           [batch, out_f], batch_dim=0), cycles=1000)
    loss, dy = sb.kernel("loss", "loss", "loss", [y, t], M.mse_body(batch * out_f), cycles=100)
    dwt = sb.kernel("fc.bwd", "fc", "backward", [x, dy],
                    lambda k, x, dy: k.matmul(x, dy, [M.dim(2), M.dim(0)], [M.dim(2), M.dim(1)],
                                              [in_f, out_f]), cycles=1000)
    sb.gradient_stream("fc.weight", dwt, order="transposed")
    sb.output("loss", loss)
    return sb


def main():
    mom = M.sgd(lr=0.1, momentum=0.9)
    write("linear_mse_s1.json", M.linear_mse(batch=7, in_f=3, out_f=2, systems=1, optimizer=mom))
    write("linear_mse_s3.json", M.linear_mse(batch=7, in_f=3, out_f=2, systems=3, optimizer=mom))
    write("mlp_ce_s2.json", M.mlp_ce(batch=6, dims=(4, 5, 3), systems=2, stream_dtype="f16"))
    write("mlp_ce_prefetch.json", M.mlp_ce(batch=8, dims=(16, 16, 16, 4), prefetch=True))
    write("mlp_ce_noprefetch.json", M.mlp_ce(batch=8, dims=(16, 16, 16, 4), prefetch=False))
    write("mlp_infer_s3.json", M.mlp_ce(batch=7, dims=(4, 5, 3), systems=3, kind="inference"))
    write("embedding_slices_s2.json", M.embedding_slices())
    ws, lp = mlp_lp_twins()
    write("mlp_ce_rowmajor.json", ws)
    write_doc("mlp_ce_lp.json", lp)
    # Sparse weight streaming: csr weight streams, mask-order gradients.
    weights = ["fc0.weight", "fc1.weight"]
    for systems, batch in ((1, 8), (2, 9)):
        write_doc(f"sparse_mlp_s{systems}.json",
                  sparse(M.mlp_ce(batch=batch, dims=(24, 32, 6), systems=systems, optimizer=mom),
                         weights))
    write_doc("sparse_mlp_rowmajor.json",
              sparse(M.mlp_ce(batch=8, dims=(24, 32, 6), optimizer=mom,
                              backward_weights="row_major"), weights))
    write_doc("sparse_linear_tgrad.json", sparse(linear_mse_tgrad(), ["fc.weight"]))


if __name__ == "__main__":
    main()
