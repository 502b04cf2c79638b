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

GMP, RigL and SET compute in C++ (``wsc._runtime.MaskSchedule``,
``include/wsc/Sparse/MaskSchedule.h``), the code ``wsc-run --sparsity`` runs,
so both give the same masks bit for bit. Their random draws (SET's growth, the
random initial masks) come from Philox keyed by ``(seed, step, parameter
name)``: a schedule keeps no generator state. A Python subclass of
``DynamicSparsity`` may instead implement ``updates_at``, ``_initial_mask``
and ``_change`` itself.

When a weight becomes active again the emulator starts it at 0 with zero
optimizer state: MemoryX keeps optimizer state only for active weights, like
SAMO's compressed layout (``python/tests/parity.py``'s ``train_reference``
mirrors this).
"""
import numbers

import numpy as np
import torch

from . import _build_tree
from .sparse import Masks, ParamFilter, _owned_parameters, default_filter


def _real(arg, value):
    """``value`` as a float, or TypeError naming ``arg``; the C++ schedule
    checks its range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{arg} must be a number, got {value!r}")
    return float(value)


def _int(arg, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{arg} must be an int, got {value!r}")
    return int(value)


def _native(**config):
    """The C++ schedule (wsc._runtime.MaskSchedule); checks the values' ranges
    and relations, raising ValueError naming the argument."""
    _runtime = _build_tree.import_runtime()
    return _runtime.MaskSchedule(**config)


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
                        masks[name] = self._start_mask(name, param).view_as(param)
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
        return self._planned_density()

    def _planned_density(self):
        # A Python subclass sets _planned_sparsity.
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
                grad = gradients[name].detach() if self.needs_gradients else None
                mask = self._updated_mask(step, name, weights[name].detach(), masks[name], grad)
                new[name] = mask.view(self._shapes[name])
        finally:
            self._generator = None
        return new

    def _start_mask(self, name, param):
        """The flat initial mask of parameter ``name``."""
        return self._initial_mask(param)

    def _updated_mask(self, step, name, weight, mask, grad):
        """The flat mask of ``name`` after step ``step``; a Python subclass
        changes a copy of the old one in ``_change(step, |weight|, mask,
        |grad|)``."""
        mask = mask.reshape(-1).clone()
        self._change(step, weight.abs(), mask, None if grad is None else grad.abs())
        return mask

    def _make_generator(self, step):
        """The random generator start() (step None) or update(step) draws
        from, parameters in order; None for a deterministic schedule."""
        return None

    def _check_update(self, step, weights, masks, gradients):
        if self._shapes is None:
            raise ValueError("update() before start()")
        if _int("step", step) < 0:
            raise ValueError(f"step must be >= 0, got {step!r}")
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


def _flat32(tensor):
    """A tensor as the flat float32 numpy array the C++ schedules read."""
    return np.ascontiguousarray(tensor.detach().reshape(-1).to(torch.float32).cpu().numpy())


class _NativeSchedule(DynamicSparsity):
    """A schedule the C++ implementation computes; ``self._config`` holds its
    arguments as wsc-run's --sparsity file spells them."""

    def _schedule(self):
        # Built per call, so that the Python object stays plain (deep-copies).
        return _native(**self._config)

    def updates_at(self, step: int) -> bool:
        return self._schedule().updates_at(step)

    def _planned_density(self):
        return self._schedule().planned_density

    def _start_mask(self, name, param):
        return torch.from_numpy(self._schedule().initial_mask(name, _flat32(param)))

    def _updated_mask(self, step, name, weight, mask, grad):
        new = self._schedule().update(step, name, _flat32(weight),
                                      mask.reshape(-1).cpu().numpy(),
                                      None if grad is None else _flat32(grad))
        return torch.from_numpy(new)


class GradualMagnitudePruning(_NativeSchedule):
    """Zhu & Gupta's gradual pruning: magnitude pruning on a cubic schedule
    that prunes fast while the network is redundant and slowly near the end."""
    source = "gmp"

    def __init__(self, final_sparsity, *, end_step, initial_sparsity=0.0, begin_step=0,
                 frequency=1, param_filter: ParamFilter = default_filter):
        super().__init__(param_filter)
        self.final_sparsity = _real("final_sparsity", final_sparsity)
        self.initial_sparsity = _real("initial_sparsity", initial_sparsity)
        self.begin_step = _int("begin_step", begin_step)
        self.end_step = _int("end_step", end_step)
        self.frequency = _int("frequency", frequency)
        self._config = dict(schedule="gmp", end_step=self.end_step,
                            final_sparsity=self.final_sparsity,
                            initial_sparsity=self.initial_sparsity,
                            begin_step=self.begin_step, frequency=self.frequency)
        self._schedule()  # checks the values

    def sparsity_at(self, step: int) -> float:
        return self._schedule().sparsity_at(step)


class _DropAndGrow(_NativeSchedule):
    """RigL and SET: constant nnz, a cosine-decaying fraction of the active
    weights (the smallest) replaced every ``update_frequency`` steps."""

    def __init__(self, sparsity, *, end_step, update_frequency=100, drop_fraction=0.3,
                 init="random", seed=0, param_filter: ParamFilter = default_filter):
        super().__init__(param_filter)
        self.sparsity = _real("sparsity", sparsity)
        self.end_step = _int("end_step", end_step)
        self.update_frequency = _int("update_frequency", update_frequency)
        self.drop_fraction = _real("drop_fraction", drop_fraction)
        if not isinstance(init, str):
            raise TypeError(f"init must be 'random' or 'magnitude', got {init!r}")
        self.init = init
        self.seed = _int("seed", seed)
        if self.seed >= 2 ** 63:
            raise ValueError(f"seed must be below 2**63, got {seed!r}")
        self._config = dict(schedule=self.source, end_step=self.end_step,
                            sparsity=self.sparsity, update_frequency=self.update_frequency,
                            drop_fraction=self.drop_fraction, init=self.init, seed=self.seed)
        self._schedule()  # checks the values

    def drop_fraction_at(self, step: int) -> float:
        return self._schedule().drop_fraction_at(step)


class RigL(_DropAndGrow):
    """Rigging the Lottery: grow where the dense gradient is largest, the
    connections that would reduce the loss fastest."""
    source = "rigl"
    needs_gradients = True


class SET(_DropAndGrow):
    """Sparse Evolutionary Training: grow at random, no gradient needed, so
    MemoryX never has to receive a dense gradient."""
    source = "set"
