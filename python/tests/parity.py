"""Train a model on the emulator and in PyTorch eager side by side."""
import contextlib
import copy

import torch

import wsc
from wsc.sparse_schedule import DynamicSparsity


def sgd(params):
    return torch.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-4)


def train_both(model, loss_fn, data, systems=1, mode="auto", optimizer=sgd,
               stream_dtype="f32", masks=None, observe=None, **options):
    """Compiles `model` and trains it on `data` ((inputs, targets) per step)
    on the emulator, and a copy in PyTorch; returns the program, the copy and
    both loss curves. With `masks` (wsc.sparse masks, or a wsc.sparse_schedule
    mask schedule), the emulator trains sparse and the copy densely with
    masked weights and gradients (train_reference). `observe(t, prog)` runs
    after the emulator's step t. Other keyword arguments go to wsc.compile."""
    reference = copy.deepcopy(model)
    prog = wsc.compile(model, loss_fn, optimizer(model.parameters()), data[0][0], data[0][1],
                       systems=systems, stream_dtype=stream_dtype, mode=mode, sparsity=masks,
                       **options)
    # A mask schedule has started (pruned `model`): the copy continues from there.
    schedule = copy.deepcopy(masks) if isinstance(masks, DynamicSparsity) else None
    initial = prog.masks()
    ours = []
    for t, (x, y) in enumerate(data):
        ours.append(prog.step(x, y))
        if observe:
            observe(t, prog)
    theirs, _ = train_reference(reference, loss_fn, optimizer(reference.parameters()), data,
                                schedule, initial, draws=prog.random_draws)
    return prog, reference, ours, theirs


def train_reference(model, loss_fn, optimizer, batches, schedule, masks, draws=None):
    """Trains ``model`` in place on ``batches`` ((inputs, targets) pairs) with
    ``masks`` (name -> bool mask) changed by ``schedule`` (None: fixed masks).
    Returns the per-step losses and the final masks.

    A step: gradients of the whole batch; the dense ones go to the schedule
    when it updates after this step and needs them; masked gradients to the
    optimizer; weights re-masked. Then, if the schedule updates, the new masks
    apply, and the optimizer state of every newly active entry restarts at
    zero (the weight itself is already zero: it was masked). With `draws`
    (step -> uniform draws, Program.random_draws) the random ops (dropout)
    replay the emulator's numbers."""
    params = dict(model.named_parameters())
    _apply(params, masks)
    losses = []
    for t, (x, y) in enumerate(batches):
        optimizer.zero_grad()
        with wsc.replay_draws(draws(t)) if draws else contextlib.nullcontext():
            loss = loss_fn(model(*(x if isinstance(x, tuple) else (x,))), y)
        loss.backward()
        updating = schedule is not None and schedule.updates_at(t)
        grads = None
        if updating and schedule.needs_gradients:
            grads = {name: torch.zeros_like(params[name]) if params[name].grad is None
                     else params[name].grad.clone() for name in masks}
        with torch.no_grad():
            for name, mask in masks.items():
                if params[name].grad is not None:
                    params[name].grad.mul_(mask)
        optimizer.step()
        _apply(params, masks)
        if updating:
            weights = {name: params[name].detach().clone() for name in masks}
            new = schedule.update(t, weights, masks, grads)
            with torch.no_grad():
                for name, mask in new.items():
                    grown = mask & ~masks[name]
                    state = optimizer.state.get(params[name], {})
                    for key in STATE_KEYS:
                        if isinstance(state.get(key), torch.Tensor):
                            state[key][grown] = 0
            masks = new
            _apply(params, masks)
        losses.append(float(loss))
    return losses, masks


# Optimizer state kept per weight entry; MemoryX keeps it only for active ones.
STATE_KEYS = ("momentum_buffer", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")


def _apply(params, masks):
    with torch.no_grad():
        for name, mask in masks.items():
            params[name].mul_(mask)


RTOL, ATOL = 1e-4, 1e-5  # check()'s tolerance on every state entry


def check(prog, reference, ours, theirs):
    """Losses at every step and all final weights agree at rtol 1e-4."""
    torch.testing.assert_close(torch.tensor(ours), torch.tensor(theirs), rtol=1e-4, atol=0)
    got = prog.state_dict()
    for name, want in reference.state_dict().items():
        torch.testing.assert_close(got[name], want, rtol=RTOL, atol=ATOL, msg=name)


def train_float64(model, loss_fn, optimizer, batches, draws=None):
    """Trains a float64 copy of `model` on `batches` (floating inputs cast;
    train_reference, no masks); returns the copy and its per-step losses."""
    exact = copy.deepcopy(model).double()
    as_double = lambda v: v.double() if v.is_floating_point() else v
    batches = [(tuple(map(as_double, x)) if isinstance(x, tuple) else as_double(x), y)
               for x, y in batches]
    losses, _ = train_reference(exact, loss_fn, optimizer(exact.parameters()), batches, None, {},
                                draws)
    return exact, losses


def assert_well_conditioned(model, eager, loss_fn, optimizer, batches, draws=None):
    """Fails unless `eager` (a float32 copy of `model` trained on `batches`,
    random ops replaying `draws`) ends within a third of check()'s tolerance
    of a float64 copy trained the same way, in every state entry. Otherwise
    float32 rounding alone decides whether a result matches, and a failure
    says nothing about wsc: a ReLU input near zero, for one, lands on either
    side by chance and takes its unit's gradient with it."""
    exact, _ = train_float64(model, loss_fn, optimizer, batches, draws)
    got = eager.state_dict()
    for name, want in exact.state_dict().items():
        if want.is_floating_point():
            ratio = ((got[name].double() - want).abs() / (ATOL + RTOL * want.abs())).max().item()
            assert ratio <= 1 / 3, (
                f"ill-conditioned setting: eager float32 uses {ratio:.2f} of the tolerance "
                f"against float64 in {name}")


def check_as_accurate_as_eager(prog, model, eager, losses, loss_fn, optimizer, batches,
                               draws=None):
    """Where float32 noise dominates (a deep BatchNorm network: batch means
    near zero in float32 sums), compares with a float64 copy trained the
    same way instead of with eager float32: in every state entry wsc's
    distance from float64 (a norm over the tensor) is at most twice eager's
    plus check()'s tolerance, and so in the loss at every step. `model` is
    the untrained copy; `losses` are (wsc's, eager's) per step."""
    exact, exact_losses = train_float64(model, loss_fn, optimizer, batches, draws)
    for step, (mine, eager_loss, want) in enumerate(zip(*losses, exact_losses)):
        allowed = 2 * abs(eager_loss - want) + RTOL * abs(want)
        assert abs(mine - want) <= allowed, (
            f"loss at step {step}: {mine} against float64 {want} (eager {eager_loss})")
    ours, theirs = prog.state_dict(), eager.state_dict()
    for name, want in exact.state_dict().items():
        if not want.is_floating_point():
            assert torch.equal(ours[name], theirs[name]), name
            continue
        ours_off = (ours[name].double() - want).norm().item()
        eager_off = (theirs[name].double() - want).norm().item()
        allowed = 2 * eager_off + RTOL * want.norm().item() + ATOL * want.numel() ** 0.5
        assert ours_off <= allowed, (
            f"{name}: {ours_off:.3g} from float64, eager float32 {eager_off:.3g} "
            f"(allowed {allowed:.3g})")
