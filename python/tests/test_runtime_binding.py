"""The wsc._runtime binding against independent torch computations.

    PYTHONPATH=python /usr/bin/python3 -m pytest python/tests/test_runtime_binding.py

Schedules are hand-made (schedule_builder.py); the references run the same
model in torch 1.13 with the same weights, data and optimizer, rounding the
weights to the stream dtype for every use as MemoryX does.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

import torch
from wsc.compiler import tool_path
from wsc import _runtime as rt

import runtime_models as M  # noqa: E402

RTOL = 2e-5


def linear_weights(rng, in_f, out_f):
    return {"fc.weight": rng.standard_normal((out_f, in_f)).astype(np.float32),
            "fc.bias": rng.standard_normal(out_f).astype(np.float32)}


def mlp_weights(rng, dims):
    w = {}
    for l in range(len(dims) - 1):
        w[f"fc{l}.weight"] = (rng.standard_normal((dims[l + 1], dims[l])) * 0.5).astype(np.float32)
        w[f"fc{l}.bias"] = (rng.standard_normal(dims[l + 1]) * 0.1).astype(np.float32)
    return w


def train(sb, weights, batches, steps=3):
    s = rt.Session(sb.dumps())
    s.load_weights(weights)
    losses = [s.step(batches[i % len(batches)]) for i in range(steps)]
    return s, losses


def assert_matches(session, losses, ref_losses, ref_weights, atol=1e-6):
    np.testing.assert_allclose(losses, ref_losses, rtol=RTOL, atol=atol)
    got = session.weights()
    for k, v in ref_weights.items():
        np.testing.assert_allclose(got[k], v, rtol=RTOL, atol=atol, err_msg=k)


@pytest.mark.parametrize("systems,batch", [(1, 7), (3, 7)])
def test_linear_mse_matches_torch(systems, batch):
    rng = np.random.default_rng(0)
    w = linear_weights(rng, 3, 2)
    batches = [[rng.standard_normal((batch, 3)).astype(np.float32),
                rng.standard_normal((batch, 2)).astype(np.float32)] for _ in range(2)]
    opt = M.sgd(lr=0.1, momentum=0.9, weight_decay=0.01)
    s, losses = train(M.linear_mse(batch, 3, 2, systems=systems, optimizer=opt), w, batches)
    ref_losses, ref_w = M.torch_train(w, batches, M.torch_linear_mse, opt, "f32", 3)
    assert_matches(s, losses, ref_losses, ref_w)


OPTIMIZERS = [
    M.sgd(lr=0.2),
    M.sgd(lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.05),
    M.sgd(lr=0.1, momentum=0.8, nesterov=True),
    M.adam(lr=0.05),
    M.adam(lr=0.05, weight_decay=0.1, amsgrad=True),
    M.adam("adamw", lr=0.05, weight_decay=0.1),
    M.adam("adamw", lr=0.05, beta1=0.8, beta2=0.9, eps=1e-3, weight_decay=0.2, amsgrad=True),
]


@pytest.mark.parametrize("opt", OPTIMIZERS, ids=lambda o: json.dumps(o, sort_keys=True))
@pytest.mark.parametrize("systems", [1, 3])
def test_mlp_cross_entropy_optimizers(opt, systems):
    dims = (4, 6, 5, 3)
    B = 7  # uneven over 3 systems: 3, 2, 2
    rng = np.random.default_rng(1)
    w = mlp_weights(rng, dims)
    batches = [[rng.standard_normal((B, dims[0])).astype(np.float32),
                rng.integers(0, dims[-1], B).astype(np.int64)] for _ in range(2)]
    s, losses = train(M.mlp_ce(B, dims, systems=systems, optimizer=opt), w, batches, steps=4)
    ref_losses, ref_w = M.torch_train(w, batches, M.torch_mlp_ce(3), opt, "f32", 4)
    assert_matches(s, losses, ref_losses, ref_w)


@pytest.mark.parametrize("stream_dtype", ["f16", "bf16"])
def test_reduced_precision_streams(stream_dtype):
    dims = (5, 8, 4)
    B = 6
    rng = np.random.default_rng(2)
    w = mlp_weights(rng, dims)
    batches = [[rng.standard_normal((B, dims[0])).astype(np.float32),
                rng.integers(0, dims[-1], B).astype(np.int64)]]
    opt = M.adam(lr=0.01)
    s, losses = train(M.mlp_ce(B, dims, systems=2, stream_dtype=stream_dtype, optimizer=opt), w,
                      batches)
    ref_losses, ref_w = M.torch_train(w, batches, M.torch_mlp_ce(2), opt, stream_dtype, 3)
    assert_matches(s, losses, ref_losses, ref_w)
    # Without the rounding the losses differ: the test can tell.
    f32_losses, _ = M.torch_train(w, batches, M.torch_mlp_ce(2), opt, "f32", 3)
    assert abs(f32_losses[0] - losses[0]) > 1e-6


def test_inference_matches_torch_and_concatenates():
    dims = (4, 5, 3)
    rng = np.random.default_rng(3)
    w = mlp_weights(rng, dims)
    x = rng.standard_normal((7, 4)).astype(np.float32)
    s = rt.Session(M.mlp_ce(7, dims, systems=3, kind="inference").dumps())
    s.load_weights(w)
    (out,) = s.infer([x])
    tw = {k: torch.tensor(v) for k, v in w.items()}
    ref = M.torch_mlp_logits(tw, torch.from_numpy(x), 2).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    assert s.output_names == ["logits"] and s.kind == "inference"


def test_report_trace_and_properties(tmp_path):
    rng = np.random.default_rng(4)
    s = rt.Session(M.linear_mse(5, 3, 2, systems=2).dumps(), "lin.json")
    s.load_weights(linear_weights(rng, 3, 2))
    loss = s.step([rng.standard_normal((5, 3)).astype(np.float32),
                   rng.standard_normal((5, 2)).astype(np.float32)])
    r = s.last_report()
    assert set(r) == {"loss", "time_s", "compute_s", "stream_s", "stall_s", "bytes_in",
                      "bytes_out", "peak_sram_per_pe_bytes"}
    assert r["loss"] == pytest.approx(loss)
    assert r["time_s"] == pytest.approx(r["compute_s"] + r["stall_s"])
    assert r["bytes_in"] == 4 * (2 * 3 + 2) and r["bytes_out"] == 4 * (2 * 3 + 2)
    s.write_trace(str(tmp_path / "t.json"))
    trace = json.loads((tmp_path / "t.json").read_text())
    cats = {e.get("cat") for e in trace["traceEvents"] if e["ph"] == "X"}
    assert {"compute", "stream-in", "stream-out", "memoryx"} <= cats
    assert (s.systems, s.global_batch) == (2, 5)
    assert s.input_names == ["input0", "target0"]
    assert s.param_names == ["fc.weight", "fc.bias"]


def test_errors_raise_value_error(tmp_path):
    rng = np.random.default_rng(5)
    with pytest.raises(ValueError, match="unsupported schedule version 9"):
        doc = M.linear_mse(5, 3, 2).to_json()
        doc["version"] = 9
        rt.Session(json.dumps(doc))
    with pytest.raises(ValueError, match="invalid JSON"):
        rt.Session("{")
    s = rt.Session(M.mlp_ce(6, (4, 5, 3)).dumps())
    with pytest.raises(ValueError, match="missing parameter 'fc0.weight'"):
        s.load_weights({})
    s.load_weights(mlp_weights(rng, (4, 5, 3)))
    x = rng.standard_normal((6, 4)).astype(np.float32)
    with pytest.raises(ValueError, match=r"input 'label0': label 5 at index 1 is out of range \[0, 3\)"):
        s.step([x, np.array([0, 5, 1, 1, 2, 0], np.int64)])
    with pytest.raises(ValueError, match="expected an integer array"):
        s.step([x, np.zeros(6, np.float32)])
    with pytest.raises(ValueError, match="has shape"):
        s.step([x[:5], np.zeros(5, np.int64)])
    with pytest.raises(ValueError, match="expected 2 inputs"):
        s.step([x])
    with pytest.raises(ValueError, match="use step"):
        s.infer([x, np.zeros(6, np.int64)])
    with pytest.raises(ValueError, match="cannot open file"):
        s.load_weights_file(str(tmp_path / "nope.safetensors"))
    assert issubclass(rt.Error, ValueError)


def test_safetensors_and_weights_file(tmp_path):
    rng = np.random.default_rng(6)
    w = linear_weights(rng, 3, 2)
    path = str(tmp_path / "w.safetensors")
    rt.write_safetensors(path, w, {"k": "v"})
    back = rt.read_safetensors(path)
    for k in w:
        np.testing.assert_array_equal(back[k], w[k])
    s = rt.Session(M.linear_mse(5, 3, 2).dumps())
    s.load_weights_file(path)
    for k in w:
        np.testing.assert_array_equal(s.weights()[k], w[k])
    rt.write_safetensors(path, {"fc.weight": w["fc.weight"].astype(np.int64), "fc.bias": w["fc.bias"]})
    with pytest.raises(ValueError, match="has dtype I64, expected F32"):
        s.load_weights_file(path)


def test_threads():
    # BLAS's thread count is process-wide (torch shares Debian's OpenBLAS):
    # put it back, so later tests run as they would alone.
    before, loops = rt.get_num_threads(), rt.get_parallel_threads()
    try:
        assert rt.set_num_threads(1) in (True, False)
        n = rt.get_num_threads()
        assert n == -1 or n == 1
    finally:
        if before > 0:
            rt.set_num_threads(before)
        rt.set_parallel_threads(loops)


def test_wsc_run_cli_matches_binding(tmp_path):
    """wsc-run on the same schedule and data prints the same losses."""
    wsc_run = tool_path("wsc-run")
    rng = np.random.default_rng(7)
    sb = M.linear_mse(7, 3, 2, systems=3)
    (tmp_path / "s.json").write_text(sb.dumps())
    w = linear_weights(rng, 3, 2)
    x = rng.standard_normal((2, 7, 3)).astype(np.float32)
    t = rng.standard_normal((2, 7, 2)).astype(np.float32)
    rt.write_safetensors(str(tmp_path / "w.safetensors"), w)
    rt.write_safetensors(str(tmp_path / "d.safetensors"), {"input0": x, "target0": t})
    out = subprocess.run([wsc_run, str(tmp_path / "s.json"), "--weights", str(tmp_path / "w.safetensors"),
                          "--data", str(tmp_path / "d.safetensors"), "--steps", "3",
                          "--report", str(tmp_path / "r.json")],
                         capture_output=True, text=True, check=True)
    report = json.loads((tmp_path / "r.json").read_text())
    s = rt.Session(sb.dumps())
    s.load_weights(w)
    losses = [s.step([x[i % 2], t[i % 2]]) for i in range(3)]
    assert [st["loss"] for st in report["steps"]] == pytest.approx(losses, rel=1e-6)
    assert "summary: 3 steps" in out.stdout


@pytest.mark.parametrize("systems", [1, 2])
def test_gather_and_strided_slices_match_numpy(systems):
    rng = np.random.default_rng(5)
    table = rng.standard_normal((6, 5)).astype(np.float32)
    ids = rng.integers(0, 6, (4, 3)).astype(np.int64)
    s = rt.Session(M.embedding_slices(systems=systems).dumps())
    s.load_weights({"emb.weight": table})
    (out,) = s.infer([ids])
    np.testing.assert_array_equal(out, M.numpy_embedding_slices(table, ids))


@pytest.mark.parametrize("bad", [6, -1])
def test_gather_index_out_of_range_is_an_error(bad):
    s = rt.Session(M.embedding_slices().dumps())
    s.load_weights({"emb.weight": np.zeros((6, 5), np.float32)})
    ids = np.zeros((4, 3), np.int64)
    ids[2, 1] = bad
    with pytest.raises(rt.Error, match=f"tensor.extract index {bad} is out of bounds for dim 0"):
        s.infer([ids])
