"""Where the batch sits: models that flatten it with other dims train on
several systems like PyTorch (the compiler's batch-dim analysis, BatchDims,
and the runtime's sharding of inputs and labels)."""

import pytest
import torch
from torch import nn

from parity import check, train_both


def sgd(params):
    return torch.optim.SGD(params, lr=0.1, momentum=0.9)


class Tagger(nn.Module):
    """A token classifier that flattens its logits inside the model
    (``logits.view(-1, C)``); its labels come flattened too, [batch * seq]."""

    def __init__(self, vocab=20, d=8, classes=5):
        super().__init__()
        self.classes = classes
        self.embed = nn.Embedding(vocab, d)
        self.fc = nn.Linear(d, classes)

    def forward(self, ids):
        return self.fc(self.embed(ids)).view(-1, self.classes)


@pytest.mark.parametrize("systems", [1, 2, 3])
def test_labels_flattened_with_the_sequence(systems):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    data = [(torch.randint(0, 20, (6, 12), generator=g),
             torch.randint(0, 5, (72,), generator=g)) for _ in range(3)]
    prog, reference, ours, theirs = train_both(Tagger(), nn.CrossEntropyLoss(), data,
                                               systems=systems, mode="weight_streaming",
                                               optimizer=sgd)
    check(prog, reference, ours, theirs)
