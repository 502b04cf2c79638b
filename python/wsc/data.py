"""Padded-batch helpers for variable tensor shape (VTS) training.

* ``padding_mask``: the ``(batch, seq)`` mask that ``wsc.nn.strip_padding`` takes.
* ``LengthBucketSampler``: batches of samples of similar length. A pipelined
  wafer moves a batch at the pace of its longest sample, so VTS gains most
  when a batch's lengths are close; the VTS paper buckets BERT's samples by
  length and draws each batch from one bucket (+13% throughput on OWT).
* Synthetic sequence lengths shaped like the paper's datasets, for benchmarks:
  ``wmt_like_lengths`` (87% padding) and ``owt_like_lengths`` (~19%).
"""

import math
from typing import Iterator, List, Optional, Sequence

import numpy as np
import torch

__all__ = ["padding_mask", "valid_fraction", "LengthBucketSampler", "wmt_like_lengths",
           "owt_like_lengths", "DEFAULT_NUM_BUCKETS"]

DEFAULT_NUM_BUCKETS = 8


def _positive_int(value, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{what} must be a positive int, got {value!r}")
    return value


def _non_negative_int(value, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{what} must be a non-negative int, got {value!r}")
    return value


def _lengths(lengths, what: str = "lengths") -> torch.Tensor:
    """``lengths`` (tensor, numpy array or sequence of ints) as a non-empty
    1-D int64 tensor of non-negative values."""
    if isinstance(lengths, np.ndarray) and lengths.dtype != object:
        lengths = torch.from_numpy(lengths)
    if isinstance(lengths, torch.Tensor):
        if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype == torch.bool:
            raise ValueError(f"{what} must hold integers, got dtype "
                             f"{str(lengths.dtype).replace('torch.', '')}")
        values = lengths.detach().cpu().to(torch.int64)
    elif isinstance(lengths, (list, tuple, range)):
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                   for v in lengths):
            raise ValueError(f"{what} must hold integers")
        values = torch.tensor([int(v) for v in lengths], dtype=torch.int64)
    else:
        raise ValueError(f"{what} must be a 1-D tensor or sequence of ints, got "
                         f"{type(lengths).__name__}")
    if values.dim() != 1 or values.numel() == 0:
        raise ValueError(f"{what} must be a non-empty 1-D sequence, got shape "
                         f"{list(values.shape)}")
    if bool((values < 0).any()):
        raise ValueError(f"{what} must be non-negative, got {int(values.min())}")
    return values


def padding_mask(lengths, seq: int) -> torch.Tensor:
    """The bool ``(len(lengths), seq)`` mask of right-padded samples:
    ``mask[b, t] = t < lengths[b]``. Every length must be in [0, seq]."""
    seq = _positive_int(seq, "seq")
    lengths = _lengths(lengths)
    longest = int(lengths.max())
    if longest > seq:
        raise ValueError(f"a length of {longest} does not fit in seq={seq}")
    return torch.arange(seq)[None, :] < lengths[:, None]


def valid_fraction(lengths, seq: int) -> float:
    """The fraction of a ``seq``-padded dataset that is valid tokens
    (1 - the padding fraction): ``sum(lengths) / (len(lengths) * seq)``."""
    seq = _positive_int(seq, "seq")
    lengths = _lengths(lengths)
    if int(lengths.max()) > seq:
        raise ValueError(f"a length of {int(lengths.max())} does not fit in seq={seq}")
    return float(lengths.sum()) / (lengths.numel() * seq)


# ---------------------------------------------------------------- bucketing


class LengthBucketSampler(torch.utils.data.Sampler):
    """A batch sampler whose batches each hold samples from one length bucket.

    Use it as ``DataLoader(dataset, batch_sampler=LengthBucketSampler(...))``;
    it yields lists of dataset indices.

    Buckets follow ``boundaries`` b_1 < .. < b_k: bucket 0 holds lengths
    < b_1, bucket i holds b_i <= length < b_(i+1), the last one lengths >=
    b_k. Without ``boundaries`` they are the ``num_buckets``-quantiles of
    ``lengths`` (default ``DEFAULT_NUM_BUCKETS``), so buckets are about
    equally full; repeated quantiles merge, so a length most samples share
    (e.g. a full window) gets a bucket of its own.

    Each epoch every sample appears exactly once: the samples of a bucket
    are shuffled and cut into ``batch_size`` batches, and the batches of all
    buckets are shuffled together. A bucket's last batch may be short;
    ``drop_last`` drops it (so up to ``batch_size - 1`` samples per bucket
    are skipped that epoch). The order depends only on ``seed`` and the epoch
    (``set_epoch``); ``shuffle=False`` keeps dataset order within buckets and
    visits buckets shortest first.
    """

    def __init__(self, lengths, batch_size: int, boundaries: Optional[Sequence[int]] = None,
                 num_buckets: Optional[int] = None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False):
        super().__init__(None)
        self.lengths = _lengths(lengths)
        self.batch_size = _positive_int(batch_size, "batch_size")
        if not isinstance(shuffle, bool):
            raise ValueError(f"shuffle must be a bool, got {shuffle!r}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last must be a bool, got {drop_last!r}")
        self.shuffle, self.drop_last = shuffle, drop_last
        self.seed = _non_negative_int(seed, "seed")
        if boundaries is not None and num_buckets is not None:
            raise ValueError("pass boundaries or num_buckets, not both")
        if boundaries is None:
            count = _positive_int(DEFAULT_NUM_BUCKETS if num_buckets is None else num_buckets,
                                  "num_buckets")
            self.boundaries = _quantile_boundaries(self.lengths, count)
        else:
            self.boundaries = _checked_boundaries(boundaries)
        self.bucket_of = torch.bucketize(self.lengths, torch.tensor(self.boundaries,
                                                                    dtype=torch.int64),
                                         right=True)
        self.buckets: List[List[int]] = [
            torch.nonzero(self.bucket_of == b).flatten().tolist()
            for b in range(len(self.boundaries) + 1)]
        self.epoch = 0

    def bucket_range(self, bucket: int):
        """``(low, high)``: bucket ``bucket`` holds ``low <= length < high``
        (``low`` is 0 for the first bucket, ``high`` None for the last)."""
        if not 0 <= bucket <= len(self.boundaries):
            raise ValueError(f"bucket must be in [0, {len(self.boundaries)}], got {bucket!r}")
        low = self.boundaries[bucket - 1] if bucket else 0
        high = self.boundaries[bucket] if bucket < len(self.boundaries) else None
        return low, high

    def set_epoch(self, epoch: int) -> None:
        """Choose the epoch whose order ``__iter__`` yields (a new shuffle)."""
        self.epoch = _non_negative_int(epoch, "epoch")

    def _batch_count(self, size: int) -> int:
        return size // self.batch_size if self.drop_last else math.ceil(size / self.batch_size)

    def __len__(self) -> int:
        return sum(self._batch_count(len(b)) for b in self.buckets)

    def __iter__(self) -> Iterator[List[int]]:
        rng = np.random.default_rng([self.seed, self.epoch])
        batches = []
        for members in self.buckets:
            order = rng.permutation(len(members)) if self.shuffle else range(len(members))
            members = [members[i] for i in order]
            for k in range(self._batch_count(len(members))):
                batches.append(members[k * self.batch_size:(k + 1) * self.batch_size])
        if self.shuffle:
            batches = [batches[i] for i in rng.permutation(len(batches))]
        return iter(batches)


def _checked_boundaries(boundaries) -> List[int]:
    if not isinstance(boundaries, (list, tuple)):
        raise ValueError(f"boundaries must be a list of ints, got {type(boundaries).__name__}")
    values = list(boundaries)
    if not all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in values):
        raise ValueError(f"boundaries must be positive ints, got {values}")
    if any(a >= b for a, b in zip(values, values[1:])):
        raise ValueError(f"boundaries must be strictly increasing, got {values}")
    return values


def _quantile_boundaries(lengths: torch.Tensor, count: int) -> List[int]:
    """The ``count``-quantiles of ``lengths`` (each an observed length), minus
    repeats and any at or below the shortest length (they'd make empty buckets)."""
    if count == 1:
        return []
    qs = torch.arange(1, count, dtype=torch.float64) / count
    cuts = torch.quantile(lengths.to(torch.float64), qs, interpolation="lower")
    shortest = int(lengths.min())
    return sorted({int(c) for c in cuts if int(c) > shortest})


# ------------------------------------------------- synthetic length data

# WMT14 En-De (as the VTS paper sets it up: 87% padding). Sentence lengths in
# subword tokens are right-skewed, roughly log-normal; median 27 and sigma
# 0.65 give a mean of ~33 tokens, i.e. a valid fraction of 0.13 at seq 256.
WMT_SEQ, WMT_MEDIAN, WMT_SIGMA = 256, 27.0, 0.65

# OpenWebText for BERT: documents (log-normal token counts, median 667 and
# sigma 1.0, i.e. a mean of ~1100 tokens) are cut into seq-token windows;
# every window is full except each document's last. At seq 512 about 62% of
# windows are full and the valid fraction is ~0.81 (19% padding; the paper
# reports 20% faster training on it with VTS).
OWT_SEQ, OWT_DOC_MEDIAN, OWT_DOC_SIGMA = 512, 667.0, 1.0


def _sample_count(n) -> int:
    return _positive_int(n, "n")


def wmt_like_lengths(n: int, seq: int = WMT_SEQ, seed: int = 0) -> torch.Tensor:
    """``n`` WMT14 En-De-like sentence lengths in [1, seq] (int64).

    Log-normal with median ``WMT_MEDIAN`` (27) tokens and sigma
    ``WMT_SIGMA`` (0.65), rounded and clipped to [1, seq]. At the default
    seq of 256 the mean valid fraction is ~0.13 (87% padding, as the VTS
    paper states for WMT14 En-De); a shorter seq pads less.
    """
    n, seq = _sample_count(n), _positive_int(seq, "seq")
    rng = np.random.default_rng([_non_negative_int(seed, "seed"), 14])
    raw = rng.lognormal(math.log(WMT_MEDIAN), WMT_SIGMA, n)
    return torch.from_numpy(np.clip(np.rint(raw), 1, seq).astype(np.int64))


def owt_like_lengths(n: int, seq: int = OWT_SEQ, seed: int = 0) -> torch.Tensor:
    """``n`` OpenWebText-for-BERT-like sample lengths in [1, seq] (int64).

    Documents with log-normal token counts (median ``OWT_DOC_MEDIAN`` = 667,
    sigma ``OWT_DOC_SIGMA`` = 1.0) are cut into windows of ``seq`` tokens:
    all full but each document's remainder. The windows are shuffled and the
    first ``n`` kept. At seq 512 most samples (~62%) fill the window and the
    valid fraction is ~0.81 (19% padding).
    """
    n, seq = _sample_count(n), _positive_int(seq, "seq")
    rng = np.random.default_rng([_non_negative_int(seed, "seed"), 512])
    windows, total = [], 0
    while total < n:
        docs = np.maximum(1, np.rint(rng.lognormal(math.log(OWT_DOC_MEDIAN), OWT_DOC_SIGMA,
                                                   max(n, 64)))).astype(np.int64)
        full, rest = docs // seq, docs % seq
        chunk = np.concatenate([np.full(int(full.sum()), seq, dtype=np.int64), rest[rest > 0]])
        windows.append(chunk)
        total += chunk.size
    lengths = np.concatenate(windows)
    return torch.from_numpy(lengths[rng.permutation(lengths.size)[:n]])
