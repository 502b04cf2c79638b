"""Small models shared by the exporter tests."""

import torch
from torch import nn


def mlp(sizes, act=nn.ReLU):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(act())
    return nn.Sequential(*layers)


class OddMLP(nn.Module):
    """37 -> 53 -> 29 -> 5 with ReLU and GELU: odd sizes catch shape mix-ups."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(37, 53)
        self.act1 = nn.ReLU()
        self.fc2 = nn.Linear(53, 29)
        self.act2 = nn.GELU()
        self.fc3 = nn.Linear(29, 5)

    def forward(self, x):
        return self.fc3(self.act2(self.fc2(self.act1(self.fc1(x)))))


class Shapes(nn.Module):
    """Views, transposes, bmm, softmax, broadcasting and a constant tensor."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 6)
        self.b = nn.Linear(3, 3)
        self.scale = nn.Parameter(torch.randn(1, 3))

    def forward(self, x):
        batch = x.shape[0]
        h = self.a(x).view(batch, 2, 3)
        att = torch.softmax(torch.matmul(h, h.transpose(1, 2)), dim=-1)
        o = self.b(torch.matmul(att, h)) * self.scale + torch.tensor([1.0, 2.0, 3.0])
        o = o - o.mean(dim=1, keepdim=True)
        o = o.permute(0, 2, 1).reshape(batch, 6)
        return torch.clamp(o, -2.0, 2.0) / torch.sqrt(o.pow(2).sum(-1, keepdim=True) + 1.0)


class Indexing(nn.Module):
    """Embedding (with padding_idx), split, cat, tril, baddbmm, arange, select
    and a strided slice: the indexing ops transformers use, forward and back."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 6, padding_idx=0)
        self.fc = nn.Linear(6, 6)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.emb(ids)
        a, b = torch.split(x, [2, 4], dim=-1)
        y = torch.cat([b, a * 2], dim=-1)
        mask = torch.tril(torch.ones(t, t))
        s = torch.baddbmm(mask, y, y.transpose(1, 2), beta=0.5, alpha=0.25)
        h = self.fc((s + torch.arange(t).float()) @ y)
        return h[:, 0] + h[:, ::2].sum(1)


def _tokens():
    ids = torch.randint(0, 11, (3, 5))
    ids[0, :2] = 0  # padding tokens get no gradient
    return nn.Sequential(Indexing()), nn.MSELoss(), ids, torch.randn(3, 6)


def _classify(model, batch, features, classes, loss=None):
    x = torch.randn(batch, features)
    y = torch.randint(0, classes, (batch,))
    return model, loss or nn.CrossEntropyLoss(), x, y


def _regress(model, batch, features, outputs, loss=None):
    return model, loss or nn.MSELoss(), torch.randn(batch, features), torch.randn(batch, outputs)


def _eval(model):
    model.eval()
    return model


# name -> () -> (model, loss_fn, inputs, targets); seeded by the caller.
CASES = {
    "linear_mse": lambda: _regress(nn.Sequential(nn.Linear(6, 4)), 5, 6, 4),
    "relu_ce": lambda: _classify(mlp([6, 8, 3], nn.ReLU), 5, 6, 3),
    "gelu_erf": lambda: _classify(mlp([6, 8, 3], nn.GELU), 5, 6, 3),
    "gelu_tanh": lambda: _classify(mlp([6, 8, 3], lambda: nn.GELU(approximate="tanh")), 5, 6, 3),
    "tanh": lambda: _classify(mlp([6, 8, 3], nn.Tanh), 5, 6, 3),
    "sigmoid": lambda: _regress(mlp([6, 8, 3], nn.Sigmoid), 5, 6, 3),
    "dropout0_train": lambda: _classify(
        nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.0), nn.ReLU(), nn.Linear(8, 3)), 5, 6, 3),
    "dropout_eval": lambda: _classify(
        _eval(nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.5), nn.Linear(8, 3))), 5, 6, 3),
    "ce_sum": lambda: _classify(mlp([6, 8, 3]), 5, 6, 3, nn.CrossEntropyLoss(reduction="sum")),
    "mse_sum": lambda: _regress(mlp([6, 8, 3], nn.Tanh), 5, 6, 3, nn.MSELoss(reduction="sum")),
    "odd_mlp": lambda: _classify(OddMLP(), 12, 37, 5),
    "all_activations": lambda: _classify(nn.Sequential(
        nn.Linear(7, 9), nn.ReLU(), nn.Linear(9, 9), nn.GELU(), nn.Linear(9, 9),
        nn.GELU(approximate="tanh"), nn.Tanh(), nn.Sigmoid(), nn.Dropout(0.0), nn.Linear(9, 4)),
        6, 7, 4),
    # Beyond the required set: exercised so they stay correct.
    "inplace_relu": lambda: _classify(
        nn.Sequential(nn.Linear(6, 8), nn.ReLU(inplace=True), nn.Linear(8, 3)), 5, 6, 3),
    "silu_leaky_softplus": lambda: _regress(nn.Sequential(
        nn.Linear(6, 8), nn.SiLU(), nn.Linear(8, 8), nn.LeakyReLU(0.1), nn.Linear(8, 8),
        nn.Softplus(), nn.Linear(8, 3)), 5, 6, 3),
    "layernorm_3d": lambda: (nn.Sequential(nn.Linear(4, 6), nn.LayerNorm(6), nn.GELU(),
                                           nn.Linear(6, 3)),
                             nn.MSELoss(), torch.randn(2, 5, 4), torch.randn(2, 5, 3)),
    "shapes": lambda: _regress(Shapes(), 4, 6, 6),
    "indexing": _tokens,
}
