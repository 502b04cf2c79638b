"""Program.system_threads (issue 19 part 8, from Python): the systems of a
Program run on threads and train bit for bit like one after another."""
import copy

import pytest
import torch
from torch import nn

import wsc
from wsc import _runtime

SYSTEMS = 4


def train(model, batches, system_threads):
    """3 steps of a copy of `model` on `system_threads` threads: (losses,
    final weights, report)."""
    model = copy.deepcopy(model)
    x, y = batches[0]
    prog = wsc.compile(model, nn.CrossEntropyLoss(),
                       torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9), x, y,
                       systems=SYSTEMS, mode="weight_streaming")
    prog.system_threads = system_threads
    assert prog.system_threads == system_threads
    losses = [prog.step(x, y) for x, y in batches]
    return losses, prog.state_dict(), prog.report()


@pytest.mark.parametrize("blas_threads", [1, 2])
def test_system_threads_train_bitwise_like_sequential(blas_threads):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 96), nn.ReLU(), nn.Linear(96, 96), nn.ReLU(),
                          nn.Linear(96, 10))
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(16, 32, generator=g), torch.randint(0, 10, (16,), generator=g))
               for _ in range(3)]
    before = _runtime.get_num_threads()
    try:
        # Equal BLAS threads on both sides (docs/Runtime.md: the bits depend
        # on BLAS threads per call, not on the system threads).
        _runtime.set_num_threads(blas_threads)
        want = train(model, batches, 1)
        got = train(model, batches, SYSTEMS)
    finally:
        _runtime.set_num_threads(before)
    assert got[0] == want[0]
    assert sorted(got[1]) == sorted(want[1])
    for name, w in want[1].items():
        assert torch.equal(got[1][name], w), name
    assert got[2] == want[2]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_system_threads_refuses_what_is_not_a_count(bad):
    torch.manual_seed(0)
    model = nn.Linear(8, 2)
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    prog = wsc.compile(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                       x, y, systems=2, mode="weight_streaming")
    with pytest.raises(ValueError, match="system_threads must be an int >= 1"):
        prog.system_threads = bad
    assert prog.system_threads == 1
