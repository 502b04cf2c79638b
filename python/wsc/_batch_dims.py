"""Which dim of each example input and target holds the batch.

The exported step takes every input and label batch-first; a model written
sequence-first (PyTorch's default for nn.Transformer, nn.MultiheadAttention
and the RNNs: `batch_first=False`) gets its tensors moved back inside the
step, and Program moves the user's tensors batch-first on the host
(docs/ExportedIR.md, "Batch dims").
"""
from typing import Optional, Sequence, Tuple, Union

import torch

BatchDim = Union[None, int, Sequence[int]]


def _named(inputs, targets):
    return ([(f"example_inputs[{i}]", t) for i, t in enumerate(inputs)]
            + [(f"example_targets[{i}]", t) for i, t in enumerate(targets)])


def is_int(value) -> bool:
    """An int that is not a bool (True == 1, but is not a dim or a count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _given(named, batch_dim) -> Tuple[int, ...]:
    """`batch_dim` as one dim per tensor, checked against the tensors."""
    if is_int(batch_dim):
        dims = [batch_dim] * len(named)
    elif isinstance(batch_dim, (tuple, list)) and all(is_int(d) for d in batch_dim):
        if len(batch_dim) != len(named):
            raise ValueError(f"batch_dim has {len(batch_dim)} entries for {len(named)} example "
                             "inputs and targets; give one per tensor, inputs first")
        dims = list(batch_dim)
    else:
        raise TypeError("batch_dim must be None, an int or a tuple of ints (one per example "
                        f"input and target), got {batch_dim!r}")
    for (name, t), d in zip(named, dims):
        if not 0 <= d < t.dim():
            raise ValueError(f"batch_dim {d} is out of range for {name} of shape "
                             f"{list(t.shape)}")
    sizes = {t.shape[d] for (_, t), d in zip(named, dims)}
    batch = min(sizes)
    for (name, t), d in zip(named, dims):
        if t.shape[d] != batch and (d != 0 or t.shape[0] % batch):
            raise ValueError(f"{name} has {t.shape[d]} entries in its batch dim {d}, but the "
                             f"batch is {batch}")
    return tuple(dims)


def _dim0_holds_batch(named) -> bool:
    """The smallest dim 0 is the batch, and every other dim 0 a multiple of
    it (labels flattened with a sequence)."""
    batch = min(t.shape[0] for _, t in named)
    return all(batch and t.shape[0] % batch == 0 for _, t in named)


def _sequence_first(named) -> Optional[Tuple[int, ...]]:
    """A batch N, the size of a dim of the first input that every tensor has,
    and in each tensor its first dim of that size; None unless exactly one
    N fits."""
    first = named[0][1]
    fits = []
    for size in dict.fromkeys(first.shape):
        dims = [next((d for d, s in enumerate(t.shape) if s == size), None) for _, t in named]
        if size and None not in dims:
            fits.append(tuple(dims))
    return fits[0] if len(fits) == 1 else None


def batch_dims(inputs: Sequence[torch.Tensor], targets: Sequence[torch.Tensor],
               batch_dim: BatchDim = None) -> Tuple[int, ...]:
    """The batch dim of each example input, then of each target.

    `batch_dim` None infers them: dim 0, when every tensor's dim 0 has the
    same size; otherwise the one size N of a dim of example_inputs[0] that
    every tensor has a dim of, each tensor's first such dim being its batch
    dim (sequence-first tokens (seq, N), hidden states (layers, N, hidden));
    otherwise dim 0 again if the smallest dim 0 divides the others (labels
    flattened with a sequence). An int is every
    tensor's batch dim; a tuple gives one per tensor, inputs first. Raises
    ValueError, naming the tensor, when they disagree."""
    named = _named(inputs, targets)
    for name, t in named:
        if t.dim() == 0:
            raise ValueError(f"{name} is a scalar; dim 0 of every example input and target "
                             "is the batch")
    if batch_dim is not None:
        return _given(named, batch_dim)
    if len({t.shape[0] for _, t in named}) == 1:
        return (0,) * len(named)
    inferred = _sequence_first(named)
    if inferred is not None:
        return inferred
    if _dim0_holds_batch(named):
        return (0,) * len(named)
    batch_name, batch = min(((n, t.shape[0]) for n, t in named), key=lambda e: e[1])
    name, t = next((n, t) for n, t in named if not batch or t.shape[0] % batch)
    raise ValueError(f"{name} has {t.shape[0]} rows in dim 0, not a multiple of the batch "
                     f"{batch} ({batch_name}'s dim 0): dim 0 of every example input and target "
                     "is the batch, unless batch_dim= says otherwise (e.g. batch_dim=1 for "
                     "sequence-first tensors)")


def batch_size(inputs: Sequence[torch.Tensor], dims: Sequence[int]) -> int:
    return int(inputs[0].shape[dims[0]])


def batch_first(tensors: Sequence[torch.Tensor], dims: Sequence[int]) -> Tuple[torch.Tensor, ...]:
    """Each tensor with its batch dim moved to dim 0."""
    return tuple(t.movedim(d, 0).contiguous() if d else t for t, d in zip(tensors, dims))


def as_written(tensors: Sequence[torch.Tensor], dims: Sequence[int]) -> Tuple[torch.Tensor, ...]:
    """The inverse of batch_first, inside the traced step: the model's layout."""
    return tuple(t.movedim(0, d) if d else t for t, d in zip(tensors, dims))
