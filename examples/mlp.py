"""A 784 -> 1024 -> 1024 -> 1024 -> 10 MLP classifier, trained with SGD + momentum.

Its data is a synthetic task the MLP can learn, so the demo's loss visibly
falls: ten classes, each a fixed random centre in 784 dimensions, and a
sample is its class's centre (scaled by 0.5) plus unit Gaussian noise.

Export it with:

    PYTHONPATH=python python3 -m wsc.export examples/mlp.py -o mlp.mlir
"""

import torch
from torch import nn

from wsc.export import Example

FEATURES = 784
CLASSES = 10


class MLP(nn.Module):
    def __init__(self, features=FEATURES, hidden=1024, classes=CLASSES):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.act1 = nn.ReLU()
        self.fc2 = nn.Linear(hidden, hidden)
        self.act2 = nn.GELU()
        self.fc3 = nn.Linear(hidden, hidden)
        self.act3 = nn.ReLU()
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        x = self.act1(self.fc1(x))
        x = self.act2(self.fc2(x))
        x = self.act3(self.fc3(x))
        return self.head(x)


# The class centres are fixed by their own seed, so every batch (the
# example's and those `wsc.export --data` draws) is the same task.
_CENTRES = torch.randn(CLASSES, FEATURES, generator=torch.Generator().manual_seed(1234))


def sample(generator: torch.Generator, batch_size: int):
    """One batch of the task: (inputs [batch, 784] f32, labels [batch] i64)."""
    labels = torch.randint(0, CLASSES, (batch_size,), generator=generator)
    inputs = 0.5 * _CENTRES[labels] + torch.randn(batch_size, FEATURES, generator=generator)
    return inputs, labels


def build(batch_size: int = 256) -> Example:
    torch.manual_seed(0)
    model = MLP()
    inputs, labels = sample(torch.Generator().manual_seed(0), batch_size)
    return Example(
        model=model,
        loss_fn=nn.CrossEntropyLoss(),
        optimizer=torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9),
        inputs=inputs,
        targets=labels,
        sample=sample,
    )
