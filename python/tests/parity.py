"""Train a model on the emulator and in PyTorch eager side by side."""
import copy

import torch

import wsc


def sgd(params):
    return torch.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-4)


def train_both(model, loss_fn, data, systems=1, mode="auto", optimizer=sgd,
               stream_dtype="f32", masks=None):
    """Compiles `model` and trains it on `data` ((inputs, targets) per step)
    on the emulator, and a copy in PyTorch; returns the program, the copy and
    both loss curves. With `masks` (wsc.sparse), the emulator trains sparse
    and the copy densely with masked gradients."""
    reference = copy.deepcopy(model)
    prog = wsc.compile(model, loss_fn, optimizer(model.parameters()), data[0][0], data[0][1],
                       systems=systems, stream_dtype=stream_dtype, mode=mode, sparsity=masks)
    params = dict(reference.named_parameters())
    ref_opt = optimizer(reference.parameters())
    ours, theirs = [], []
    for x, y in data:
        ours.append(prog.step(x, y))
        ref_opt.zero_grad()
        inputs = x if isinstance(x, tuple) else (x,)
        loss = loss_fn(reference(*inputs), y)
        loss.backward()
        for name, mask in (masks or {}).items():
            params[name].grad.mul_(mask)
        ref_opt.step()
        theirs.append(loss.item())
    return prog, reference, ours, theirs


def check(prog, reference, ours, theirs):
    """Losses at every step and all final weights agree at rtol 1e-4."""
    torch.testing.assert_close(torch.tensor(ours), torch.tensor(theirs), rtol=1e-4, atol=0)
    got = prog.state_dict()
    for name, want in reference.state_dict().items():
        torch.testing.assert_close(got[name], want, rtol=1e-4, atol=1e-5, msg=name)
