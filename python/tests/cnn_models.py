"""Small convolutional models for the exporter tests (conv, batch norm, pooling, ResNet)."""

import torch
from torch import nn


class BasicBlock(nn.Module):
    """ResNet's two 3x3 convs with BN; identity or 1x1-stride-2 + BN shortcut."""

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    """conv3x3-BN-ReLU-MaxPool stem, 4 BasicBlocks (8, 8, 16 stride 2, 16), pool, fc."""

    def __init__(self, classes=10, width=8):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = nn.Sequential(BasicBlock(width, width), BasicBlock(width, width))
        self.layer2 = nn.Sequential(BasicBlock(width, 2 * width, stride=2),
                                    BasicBlock(2 * width, 2 * width))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(2 * width, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class TiePool(nn.Module):
    """Max pooling of integer-valued inputs plus a zero-initialised per-position
    parameter: its gradient is exactly where the pooling routed each gradient,
    so a tie sent to any element but the first maximal one changes it."""

    def __init__(self, channels, size, pool, classes=3):
        super().__init__()
        self.pos = nn.Parameter(torch.zeros(1, channels, size, size))
        self.pool = pool
        pooled = pool(torch.zeros(1, channels, size, size)).numel()
        self.fc = nn.Linear(pooled, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(x + self.pos), 1))


class MaskedBuffers(nn.Module):
    """A BatchNorm (updated buffers), a non-persistent scale and a read-only bool
    causal mask (buffers the step reads but never writes)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.full((4,), 0.5), persistent=False)
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)
        self.register_buffer("mask", torch.tril(torch.ones(4, 4, dtype=torch.bool)))

    def forward(self, x):
        h = self.bn(self.fc(x)) * self.scale
        return h.unsqueeze(1).masked_fill(self.mask.logical_not(), 0.0).sum(-1)


def _head(x, *layers, classes=3):
    """``layers`` then flatten and a Linear sized for input ``x``."""
    body = nn.Sequential(*layers, nn.Flatten()).eval()  # eval: leave BN statistics alone
    with torch.no_grad():
        features = body(torch.zeros(x.shape)).shape[1]
    body.train()
    return nn.Sequential(*body, nn.Linear(features, classes))


def _ties(batch, channels, size):
    """Integer values in {0, 1, 2}, mostly 0: many windows with tied maxima."""
    return torch.clamp(torch.randint(-4, 3, (batch, channels, size, size)), min=0).float()


def _classify(model, x, classes=3):
    return model, nn.CrossEntropyLoss(), x, torch.randint(0, classes, (x.shape[0],))


def _cnn(x, *layers):
    return _classify(_head(x, *layers), x)


# name -> () -> (model, loss_fn, inputs, targets); seeded by the caller.
CASES = {
    "conv_s2_p1": lambda: _cnn(torch.randn(3, 3, 9, 9),
                               nn.Conv2d(3, 6, 3, stride=2, padding=1), nn.ReLU()),
    "conv_1x1_s2_no_bias": lambda: _cnn(torch.randn(3, 3, 8, 8),
                                        nn.Conv2d(3, 5, 1, stride=2, bias=False)),
    # Non-square kernel/stride/input, and padding wider than the kernel.
    "conv_rect_wide_pad": lambda: _cnn(torch.randn(2, 2, 7, 5),
                                       nn.Conv2d(2, 4, (5, 3), stride=(2, 1), padding=(2, 1)),
                                       nn.Tanh(), nn.Conv2d(4, 3, 3, padding=3)),
    "bn_relu": lambda: _cnn(torch.randn(4, 3, 6, 6),
                            nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU()),
    "bn1d_no_affine": lambda: _classify(
        nn.Sequential(nn.Linear(5, 7), nn.BatchNorm1d(7, affine=False, momentum=0.3),
                      nn.Linear(7, 3)), torch.randn(6, 5)),
    "maxpool_3x3_s2_p1": lambda: _cnn(torch.randn(2, 3, 7, 7), nn.Conv2d(3, 4, 3, padding=1),
                                      nn.ReLU(), nn.MaxPool2d(3, 2, 1)),
    "maxpool_ties": lambda: _classify(TiePool(3, 7, nn.MaxPool2d(3, 2, 1)), _ties(4, 3, 7)),
    "maxpool_ties_overlap_ceil": lambda: _classify(
        TiePool(2, 6, nn.MaxPool2d(2, 1, ceil_mode=True)), _ties(3, 2, 6)),
    "maxpool_ties_dilated_rect": lambda: _classify(
        TiePool(2, 9, nn.MaxPool2d((3, 2), (2, 1), 1, dilation=(2, 1))), _ties(2, 2, 9)),
    "avgpool": lambda: _cnn(torch.randn(2, 3, 7, 7), nn.Conv2d(3, 4, 3, padding=1),
                            nn.AvgPool2d(2)),
    "avgpool_overlap_pad": lambda: _cnn(
        torch.randn(2, 3, 9, 9), nn.Conv2d(3, 4, 3), nn.AvgPool2d(3, 2, 1), nn.Tanh(),
        nn.AvgPool2d(2, ceil_mode=True, count_include_pad=False, padding=1)),
    "adaptive_avgpool": lambda: _cnn(torch.randn(2, 3, 6, 6), nn.Conv2d(3, 4, 3, padding=1),
                                     nn.AdaptiveAvgPool2d((2, 2)), nn.ReLU(),
                                     nn.AdaptiveAvgPool2d(1)),
    "resnet": lambda: _classify(ResNet(), torch.randn(4, 3, 16, 16), classes=10),
}


def small_cnn():
    """Zero-padded and strided convs, a -inf-padded max pool, an average pool;
    no BatchNorm, so that layer-pipelined mode (which keeps no buffers) runs it
    too (ResNet covers BatchNorm)."""
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                         nn.MaxPool2d(3, stride=2, padding=1),
                         nn.Conv2d(8, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(8, 10))
