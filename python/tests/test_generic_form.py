"""Training steps in generic form compile to what their named form does.

IREE and JAX print fills, transposes and matmuls as the `linalg.generic`
each named op stands for, and upstream's `--linalg-generalize-named-ops`
makes the same rewrite. wsc's analyses must read both forms alike: a fill
in generic form still starts a sum at zero (the position embedding's
gradient, summed over the batch, stays partial across systems), a generic
transpose is still only a transpose (a convolution's data gradient is
still described as a convolution). Each step below is exported by the
project's exporter, generalized, and compiled both ways: the output must
be the same text. The named forms train like PyTorch eager on two systems
(test_transformers.py, test_torchvision.py), so the same text runs the
same numerics.

Not covered, as the forms differ there: upstream's canonicalizer folds a
transpose of a transpose only in named form, so a generic input keeps
both until wsc-fold-transposes fuses them (the modeled time of
`micro-batch=auto` moves by 0.03% for the GPT below), and layer-pipelined
placement reads a convolution's geometry from its named op only.
"""
import subprocess

import pytest
import torch
import torchvision.models as tv
from torch import nn

from wsc import models
from wsc.compiler import tool_path
from wsc.export import export_training_step


def wsc_opt(text, *args):
    done = subprocess.run([tool_path("wsc-opt"), "-", *args], input=text,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def tiny_gpt():
    torch.manual_seed(0)
    model = models.GPT(models.GPTConfig(vocab=16, d=8, heads=2, seq=4, layers=1))
    ids = torch.randint(0, 16, (4, 4))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return export_training_step(model, models.LMLoss(), optimizer, ids, ids)


def resnet18():
    torch.manual_seed(0)
    model = tv.resnet18(weights=None, num_classes=10)
    x, y = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    return export_training_step(model, nn.CrossEntropyLoss(), optimizer, x, y)


@pytest.mark.parametrize("build, options", [
    (tiny_gpt, "systems=2"),
    (tiny_gpt, "systems=2 micro-batch=1"),
    # Placement finds the weight of a contraction behind its transpose.
    (tiny_gpt, "mode=layer_pipelined"),
    (resnet18, "systems=2"),
    (resnet18, "systems=2 micro-batch=1"),
], ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_generic_form_compiles_as_named_form(build, options):
    named = build()
    generic = wsc_opt(named, "--linalg-generalize-named-ops")
    # The rewrite happened: the test compares two different inputs.
    assert "linalg.fill" in named and "linalg.fill" not in generic
    pipeline = f"--wsc-pipeline={options}"
    assert wsc_opt(generic, pipeline) == wsc_opt(named, pipeline)
