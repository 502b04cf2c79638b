"""The runtime's own parallel loops (include/wsc/Runtime/ParallelFor.h):
MemoryX's rounding and optimizer, SwarmX's sums, micro-batch accumulation and
the interpreter's elementwise, reduction and copy loops split over threads
and still train bit for bit like one thread. BLAS stays at one thread on both
sides (its own bits depend on its thread count, docs/Runtime.md)."""
import copy

import pytest
import torch
from torch import nn

import wsc
from wsc import _runtime


def cnn():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


def train(parallel, systems, micro_batch_size, stream_dtype):
    """3 steps at `parallel` loop threads: (losses, final weights and buffers)."""
    model = copy.deepcopy(cnn())
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(16, 3, 16, 16, generator=g), torch.randint(0, 10, (16,), generator=g))
               for _ in range(3)]
    _runtime.set_parallel_threads(parallel)
    assert _runtime.get_parallel_threads() == parallel
    x, y = batches[0]
    prog = wsc.compile(model, nn.CrossEntropyLoss(),
                       torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1), x, y,
                       systems=systems, stream_dtype=stream_dtype, mode="weight_streaming",
                       micro_batch_size=micro_batch_size)
    losses = [prog.step(x, y) for x, y in batches]
    return losses, prog.state_dict()


@pytest.mark.parametrize("systems,micro_batch_size,stream_dtype",
                         [(1, None, "f32"), (2, None, "f16"), (2, 4, "bf16")])
def test_parallel_loops_train_bitwise_like_one_thread(systems, micro_batch_size, stream_dtype):
    blas, parallel = _runtime.get_num_threads(), _runtime.get_parallel_threads()
    try:
        _runtime.set_num_threads(1)
        want = train(1, systems, micro_batch_size, stream_dtype)
        for threads in (2, 3):
            got = train(threads, systems, micro_batch_size, stream_dtype)
            assert got[0] == want[0], threads
            assert sorted(got[1]) == sorted(want[1])
            for name, w in want[1].items():
                assert torch.equal(got[1][name], w), (threads, name)
    finally:
        _runtime.set_num_threads(blas)
        _runtime.set_parallel_threads(parallel)


def test_parallel_threads_refuses_zero():
    assert _runtime.set_parallel_threads(0) is False
    assert _runtime.get_parallel_threads() >= 1
