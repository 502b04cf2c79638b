"""A 784 -> 1024 -> 1024 -> 1024 -> 10 MLP classifier, trained with SGD + momentum.

Export it with:

    PYTHONPATH=python python3 -m wsc.export examples/mlp.py -o mlp.mlir
"""

import torch
from torch import nn

from wsc.export import Example


class MLP(nn.Module):
    def __init__(self, features=784, hidden=1024, classes=10):
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


def build(batch_size: int = 256) -> Example:
    torch.manual_seed(0)
    model = MLP()
    inputs = torch.randn(batch_size, 784)
    labels = torch.randint(0, 10, (batch_size,), dtype=torch.int64)
    return Example(
        model=model,
        loss_fn=nn.CrossEntropyLoss(),
        optimizer=torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9),
        inputs=inputs,
        targets=labels,
    )
