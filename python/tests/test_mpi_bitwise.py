"""`mpirun -np R wsc-run` trains exactly like the in-process run of the same
schedule, bit for bit (issue 19): losses, modeled report, final weights and
buffers, for R that divides the systems (2 of 4) and R that does not (3 of
4), and so does the in-process run with the systems on threads. The models
cover every kind of SwarmX traffic: dense weight and gradient streams (MLP),
row-streamed embedding gradients (GPT), all-reduced batch statistics and
buffer updates (ResNet with SyncBN), ragged VTS steps whose lengths every
rank needs (VTS encoder), and csr weight streams, gradient requests and mask
updates on rank 0 (a 90%-sparse MLP with RigL)."""
import json

import pytest
import torch
from torch import nn

import wsc
from wsc.sparse_schedule import RigL
from mpi_runs import assert_same_run, data_share_bytes, run
from transformer_models import GPT, LMLoss, token_batches
from cnn_models import ResNet
from vts_models import Encoder, encoder_batches

SYSTEMS = 4
STEPS = 3


def mlp_case():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 10))
    g = torch.Generator().manual_seed(0)
    data = [(torch.randn(12, 32, generator=g), torch.randint(0, 10, (12,), generator=g))
            for _ in range(STEPS)]
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, nn.CrossEntropyLoss(), opt, data, {}


def gpt_case():
    torch.manual_seed(0)
    model = GPT(layers=1, tied=False, vocab=128, d=32, heads=2, seq=8)
    data = token_batches(STEPS, 8, 8, 128)
    return model, LMLoss(), torch.optim.AdamW(model.parameters(), lr=1e-2), data, {}


def resnet_case():
    torch.manual_seed(0)
    model = ResNet(classes=4, width=4)
    g = torch.Generator().manual_seed(0)
    data = [(torch.randn(8, 3, 8, 8, generator=g), torch.randint(0, 4, (8,), generator=g))
            for _ in range(STEPS)]
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, nn.CrossEntropyLoss(), opt, data, {}


def vts_case():
    torch.manual_seed(0)
    model = Encoder()
    data = encoder_batches(STEPS, [16, 9, 5, 12, 3, 16, 7, 2])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, nn.CrossEntropyLoss(), opt, data, {"vts": True}


def rigl_case():
    model, loss, _, data, _ = mlp_case()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    sparsity = RigL(0.9, end_step=STEPS, update_frequency=1)
    return model, loss, opt, data, {"sparsity": sparsity}


CASES = {"mlp": mlp_case, "gpt_rows": gpt_case, "resnet_syncbn": resnet_case,
         "vts": vts_case, "rigl_90": rigl_case}


@pytest.fixture(scope="module", params=sorted(CASES))
def saved(request, tmp_path_factory):
    """The case compiled for 4 systems and saved for wsc-run, and its
    in-process run on one thread: the reference."""
    model, loss, opt, data, options = CASES[request.param]()
    x, y = data[0]
    prog = wsc.compile(model, loss, opt, x, y, systems=SYSTEMS, mode="weight_streaming",
                       **options)
    directory = tmp_path_factory.mktemp(request.param)
    paths = prog.save_for_run(directory / "in", data)
    return request.param, prog, paths, directory, run(paths, directory / "reference")


def test_the_case_moves_what_it_covers(saved):
    name, prog, _, _, (report, _, _) = saved
    steps = prog.schedule["steps"]
    formats = {(s["op"], s.get("format", "dense")) for s in steps}
    if name == "gpt_rows":
        assert ("gradient_stream", "rows") in formats
    if name == "resnet_syncbn":
        assert {"all_reduce", "buffer_update"} <= {s["op"] for s in steps}
    if name == "vts":
        assert report["steps"][-1]["vts"]["ragged"]
    if name == "rigl_90":
        assert ("weight_stream", "csr") in formats and ("gradient_stream", "mask") in formats


@pytest.mark.parametrize("ranks", [2, 3])
def test_mpirun_is_bitwise_the_in_process_run(saved, ranks):
    name, _, paths, directory, reference = saved
    trace = directory / f"np{ranks}.trace.json"
    got = run(paths, directory / f"np{ranks}", ranks=ranks, extra=["--trace", str(trace)])
    assert_same_run(reference, got, f"{name}: mpirun -np {ranks}")
    # Rank 0 prints; the summary appears once.
    assert got[2].stdout.count("summary:") == 1
    # Beside the modeled timeline, a measured wall-time track per rank with
    # a span per step.
    events = json.loads(trace.read_text())["traceEvents"]
    (wall,) = [e["pid"] for e in events
               if e["ph"] == "M" and e["args"]["name"] == "measured wall time (MPI ranks)"]
    tracks = {e["tid"]: e["args"]["name"] for e in events
              if e["ph"] == "M" and e["pid"] == wall and "tid" in e}
    assert tracks == {r: f"rank {r}" for r in range(ranks)}
    spans = [(e["tid"], e["args"]["step"]) for e in events if e["ph"] == "X" and e["pid"] == wall]
    assert sorted(spans) == [(r, s) for r in range(ranks) for s in range(STEPS)]
    assert any(e["ph"] == "X" and e["pid"] != wall for e in events)  # the modeled timeline
    assert [len(s["rank_wall_s"]) for s in got[0]["steps"]] == [ranks] * STEPS
    # Each rank read its systems' samples of the data file, not all of it.
    assert got[0]["data_bytes_read"] == data_share_bytes(paths, ranks, STEPS), name
    assert reference[0]["data_bytes_read"] == data_share_bytes(paths, 1, STEPS), name


def test_systems_on_threads_are_bitwise_sequential(saved):
    """Part 8: the 4 systems on 4 threads (each with one BLAS thread)."""
    name, _, paths, directory, reference = saved
    got = run(paths, directory / "threads", threads=4)
    assert_same_run(reference, got, f"{name}: 4 system threads")
