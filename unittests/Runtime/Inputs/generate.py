"""Regenerates the hand-made schedules in this directory.

    python3 unittests/Runtime/Inputs/generate.py

The schedules are written op by op with python/tests/schedule_builder.py
(no compiler involved; the models are in python/tests/runtime_models.py);
the generated JSON is checked in so the C++ tests need no Python.
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
        mlp = M.mlp_ce(batch=batch, dims=(24, 32, 6), systems=systems, optimizer=mom)
        write_doc(f"sparse_mlp_s{systems}.json", M.sparse_weights(mlp, weights))
    mlp = M.mlp_ce(batch=8, dims=(24, 32, 6), optimizer=mom, backward_weights="row_major")
    write_doc("sparse_mlp_rowmajor.json", M.sparse_weights(mlp, weights))
    write_doc("sparse_linear_tgrad.json", M.sparse_weights(M.linear_mse_tgrad(), ["fc.weight"]))


if __name__ == "__main__":
    main()
