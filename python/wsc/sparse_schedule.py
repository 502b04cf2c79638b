"""Dynamic unstructured sparsity: mask schedules MemoryX applies between steps.

A schedule is a fixed-mask run (``wsc.sparse``) whose masks change after some
training steps. Every schedule has the same four methods:

* ``start(model)``: the initial masks; zeroes the pruned weights in place.
* ``planned_density(name)``: the density the compiler plans the parameter's
  streams for: where it ends (GMP) or stays (RigL, SET).
* ``updates_at(t)``: whether the masks change after step ``t`` (0-based).
* ``update(t, weights, masks, gradients)``: the masks after step ``t``.

Schedules:

* ``GradualMagnitudePruning`` (Zhu & Gupta 2017): the sparsity follows
  ``s_t = s_f + (s_i - s_f) * (1 - (t - t_0) / (t_end - t_0))**3`` and every
  update prunes the smallest-magnitude active weights down to ``s_t``.
* ``RigL`` (Evci et al. 2020): every ``update_frequency`` steps, drop the
  ``k = floor(d_t * nnz)`` active weights of smallest magnitude and grow the
  ``k`` inactive ones of largest dense gradient magnitude, with the cosine
  drop fraction ``d_t = d / 2 * (1 + cos(pi * (t + 1) / t_end))``.
* ``SET`` (Mocanu et al. 2018): RigL's drop, growing ``k`` random entries.

RigL and SET grow among the entries inactive BEFORE the update, so a weight is
never dropped and grown back in one update, and nnz stays constant.

A parameter keeps ``numel - round(sparsity * numel)`` active weights, the count
``sparse.prune_magnitude`` keeps, so a schedule ending at ``s`` ends with
``prune_magnitude(s)``'s nnz. Rankings are deterministic: ties go to the lower
flat index, and NaN ranks last (a NaN weight is dropped, and a NaN gradient
grown, only after every number).

When a weight becomes active again the emulator starts it at 0 with zero
optimizer state: MemoryX keeps optimizer state only for active weights, like
SAMO's compressed layout (``tests/sparse_reference.py`` mirrors this).
"""
import math
import numbers
import random

import torch

from .sparse import (Masks, ParamFilter, _owned_parameters, active_count, default_filter,
                     magnitude_mask, pick)


def _number(arg, value, ok, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{arg} must be a number, got {value!r}")
    if not ok(value):
        raise ValueError(f"{arg} must be {what}, got {value!r}")
    return float(value)


def _integer(arg, value, low, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{arg} must be an int, got {value!r}")
    if value < low or (high is not None and value >= high):
        bound = f"in [{low}, {high})" if high is not None else f">= {low}"
        raise ValueError(f"{arg} must be {bound}, got {value!r}")
    return int(value)


def _sparsity(arg, value):
    return _number(arg, value, lambda v: 0 <= v < 1, "a number in [0, 1)")


class DynamicSparsity:
    """Base: a mask schedule MemoryX applies between training steps."""
    source = "dynamic"
    needs_gradients = False

    def __init__(self, param_filter: ParamFilter):
        if not callable(param_filter):
            raise TypeError(f"param_filter must be callable, got {param_filter!r}")
        self.param_filter = param_filter
        self._shapes = None  # name -> shape once started
        # Only while start() or update() runs, so that a schedule deep-copies.
        self._generator = None

    def start(self, model) -> Masks:
        """Initial masks for the selected parameters; zeroes the pruned weights
        of ``model`` in place. Call once: ``update`` checks its arguments
        against the parameters selected here."""
        if self._shapes is not None:
            raise ValueError("start() was already called on this schedule")
        masks = Masks(source=self.source)
        self._generator = self._make_generator(None)
        try:
            with torch.no_grad():
                for name, param, module in _owned_parameters(model):
                    if self.param_filter(name, param, module):
                        masks[name] = self._initial_mask(param).view_as(param)
                        param.mul_(masks[name])
        finally:
            self._generator = None
        self._shapes = {name: mask.shape for name, mask in masks.items()}
        return masks

    def planned_density(self, name: str) -> float:
        """The density to plan ``name``'s streams for: GMP's final density,
        RigL's and SET's constant one."""
        if self._shapes is not None and name not in self._shapes:
            raise ValueError(f"name: '{name}' is not a parameter this schedule started")
        return 1.0 - self._planned_sparsity

    def updates_at(self, step: int) -> bool:
        """Whether the masks change after step ``step`` (0-based)."""
        raise NotImplementedError

    def update(self, step: int, weights: dict, masks: dict, gradients=None) -> Masks:
        """The masks after step ``step``; reads its inputs, never writes them."""
        self._check_update(step, weights, masks, gradients)
        new = Masks(source=self.source)
        self._generator = self._make_generator(step)
        try:
            for name in self._shapes:
                mask = masks[name].reshape(-1).clone()
                grad = gradients[name].abs() if self.needs_gradients else None
                self._change(step, weights[name].detach().abs(), mask, grad)
                new[name] = mask.view(self._shapes[name])
        finally:
            self._generator = None
        return new

    def _make_generator(self, step):
        """The random generator start() (step None) or update(step) draws
        from, parameters in order; None for a deterministic schedule."""
        return None

    def _check_update(self, step, weights, masks, gradients):
        if self._shapes is None:
            raise ValueError("update() before start()")
        _integer("step", step, 0)
        if not self.updates_at(step):
            raise ValueError(f"step: the masks do not change after step {step}")
        named = [("weights", weights), ("masks", masks)]
        if self.needs_gradients:
            if gradients is None:
                raise ValueError(f"gradients: {type(self).__name__} needs the dense gradients")
            named.append(("gradients", gradients))
        for arg, tensors in named:
            if not isinstance(tensors, dict):
                raise TypeError(f"{arg} must be a dict of name -> tensor, "
                                f"got {type(tensors).__name__}")
            if set(tensors) != set(self._shapes):
                raise ValueError(f"{arg}: names {sorted(tensors)} do not match the "
                                 f"started parameters {sorted(self._shapes)}")
            for name, shape in self._shapes.items():
                value = tensors[name]
                if not isinstance(value, torch.Tensor) or value.shape != shape:
                    raise ValueError(f"{arg}: '{name}' must be a tensor of shape {list(shape)}")
                if not (value.dtype == torch.bool if arg == "masks"
                        else value.is_floating_point()):
                    raise TypeError(f"{arg}: '{name}' has dtype {value.dtype}")


class GradualMagnitudePruning(DynamicSparsity):
    """Zhu & Gupta's gradual pruning: magnitude pruning on a cubic schedule
    that prunes fast while the network is redundant and slowly near the end."""
    source = "gmp"

    def __init__(self, final_sparsity, *, end_step, initial_sparsity=0.0, begin_step=0,
                 frequency=1, param_filter: ParamFilter = default_filter):
        super().__init__(param_filter)
        self.final_sparsity = _sparsity("final_sparsity", final_sparsity)
        self.initial_sparsity = _sparsity("initial_sparsity", initial_sparsity)
        if self.initial_sparsity > self.final_sparsity:
            raise ValueError(f"initial_sparsity {initial_sparsity!r} must not exceed "
                             f"final_sparsity {final_sparsity!r} (masks only shrink)")
        self.begin_step = _integer("begin_step", begin_step, 0)
        self.end_step = _integer("end_step", end_step, 1)
        if self.begin_step >= self.end_step:
            raise ValueError(f"begin_step {begin_step} must be less than end_step {end_step}")
        self.frequency = _integer("frequency", frequency, 1)
        self._planned_sparsity = self.final_sparsity

    def sparsity_at(self, step: int) -> float:
        if step < self.begin_step:
            return self.initial_sparsity
        if step >= self.end_step:
            return self.final_sparsity
        left = 1 - (step - self.begin_step) / (self.end_step - self.begin_step)
        return self.final_sparsity + (self.initial_sparsity - self.final_sparsity) * left ** 3

    def updates_at(self, step: int) -> bool:
        # end_step always updates, so training ends at exactly final_sparsity.
        return self.begin_step <= step <= self.end_step and \
            ((step - self.begin_step) % self.frequency == 0 or step == self.end_step)

    def _initial_mask(self, param):
        return magnitude_mask(param, self.initial_sparsity)

    def _change(self, step, magnitude, mask, grad):
        excess = int(mask.sum()) - active_count(self.sparsity_at(step), mask.numel())
        if excess > 0:  # never re-activate: a mask at or under target stays
            mask[pick(magnitude, mask, excess, largest=False)] = False


class _DropAndGrow(DynamicSparsity):
    """RigL and SET: constant nnz, a cosine-decaying fraction of the active
    weights (the smallest) replaced every ``update_frequency`` steps."""

    def __init__(self, sparsity, *, end_step, update_frequency=100, drop_fraction=0.3,
                 init="random", seed=0, param_filter: ParamFilter = default_filter):
        super().__init__(param_filter)
        self.sparsity = _sparsity("sparsity", sparsity)
        self.end_step = _integer("end_step", end_step, 1)
        self.update_frequency = _integer("update_frequency", update_frequency, 1)
        self.drop_fraction = _number("drop_fraction", drop_fraction,
                                     lambda v: 0 < v <= 1, "a number in (0, 1]")
        if init not in ("random", "magnitude"):
            raise ValueError(f"init must be 'random' or 'magnitude', got {init!r}")
        self.init = init
        self.seed = _integer("seed", seed, 0, 2 ** 32)
        self._planned_sparsity = self.sparsity

    def updates_at(self, step: int) -> bool:
        return (step + 1) % self.update_frequency == 0 and step + 1 < self.end_step

    def _make_generator(self, step):
        # The random initial masks.
        return torch.Generator().manual_seed(self.seed) if step is None else None

    def drop_fraction_at(self, step: int) -> float:
        return self.drop_fraction / 2 * (1 + math.cos(math.pi * (step + 1) / self.end_step))

    def _initial_mask(self, param):
        if self.init == "magnitude":
            return magnitude_mask(param, self.sparsity)
        mask = torch.ones(param.numel(), dtype=torch.bool)
        pruned = param.numel() - active_count(self.sparsity, param.numel())
        mask[torch.randperm(param.numel(), generator=self._generator)[:pruned]] = False
        return mask

    def _change(self, step, magnitude, mask, grad):
        # Grown entries come from the OLD mask's inactive ones, so a weight
        # just dropped is not grown back in the same update (as in RigL).
        nnz = int(mask.sum())
        k = min(math.floor(self.drop_fraction_at(step) * nnz), mask.numel() - nnz)
        grown = self._grow(~mask, grad, k)
        mask[pick(magnitude, mask, k, largest=False)] = False
        mask[grown] = True

    def _grow(self, inactive, grad, k):
        raise NotImplementedError


class RigL(_DropAndGrow):
    """Rigging the Lottery: grow where the dense gradient is largest, the
    connections that would reduce the loss fastest."""
    source = "rigl"
    needs_gradients = True

    def _grow(self, inactive, grad, k):
        return pick(grad, inactive, k, largest=True)


class SET(_DropAndGrow):
    """Sparse Evolutionary Training: grow at random, no gradient needed, so
    MemoryX never has to receive a dense gradient."""
    source = "set"

    def _make_generator(self, step):
        if step is None:
            return super()._make_generator(step)
        # One generator per (seed, step). torch's CPU generator keeps 32 bits
        # of its seed, so mix the pair down to 32 bits.
        mixed = random.Random((self.seed << 64) | step).getrandbits(32)
        return torch.Generator().manual_seed(mixed)

    def _grow(self, inactive, grad, k):
        index = inactive.nonzero().flatten()
        return index[torch.randperm(index.numel(), generator=self._generator)[:k]]
