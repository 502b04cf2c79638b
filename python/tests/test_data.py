"""wsc.data: padding masks, the length-bucketing batch sampler, synthetic lengths."""

import collections

import numpy as np
import pytest
import torch

from wsc import data
from wsc.data import LengthBucketSampler, padding_mask, valid_fraction


# ------------------------------------------------------------ padding_mask


def test_padding_mask_values():
    mask = padding_mask([3, 0, 5, 1], 5)
    assert mask.dtype == torch.bool and mask.shape == (4, 5)
    assert mask.tolist() == [[True, True, True, False, False], [False] * 5, [True] * 5,
                             [True, False, False, False, False]]


def test_padding_mask_takes_tensors_and_arrays():
    expected = padding_mask([2, 4], 4)
    assert torch.equal(padding_mask(torch.tensor([2, 4]), 4), expected)
    assert torch.equal(padding_mask(torch.tensor([2, 4], dtype=torch.int32), 4), expected)
    assert torch.equal(padding_mask(np.array([2, 4]), 4), expected)


@pytest.mark.parametrize("lengths,seq,message", [
    ([3, 6], 5, r"a length of 6 does not fit in seq=5"),
    ([3, -1], 5, r"must be non-negative, got -1"),
    (torch.tensor([1.0, 2.0]), 5, r"must hold integers, got dtype float32"),
    (torch.tensor([True]), 5, r"must hold integers, got dtype bool"),
    ([1.5], 5, r"must hold integers"),
    (torch.ones(2, 2, dtype=torch.int64), 5, r"1-D sequence, got shape \[2, 2\]"),
    ([], 5, r"non-empty"),
    ("12", 5, r"tensor or sequence of ints, got str"),
    ([1, 2], 0, r"seq must be a positive int, got 0"),
    ([1, 2], True, r"seq must be a positive int, got True"),
    ([1, 2], 4.0, r"seq must be a positive int"),
])
def test_padding_mask_errors(lengths, seq, message):
    with pytest.raises(ValueError, match=message):
        padding_mask(lengths, seq)


def test_valid_fraction():
    assert valid_fraction([4, 2, 0, 2], 4) == pytest.approx(0.5)
    assert valid_fraction(torch.tensor([8]), 8) == 1.0
    with pytest.raises(ValueError, match="does not fit"):
        valid_fraction([9], 8)


# ------------------------------------------------------------ sampler


def lengths_for_sampler(n=203, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).integers(1, 129, n))


def epoch(sampler, e=None):
    if e is not None:
        sampler.set_epoch(e)
    return list(sampler)


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("kwargs", [{}, {"num_buckets": 1}, {"num_buckets": 5},
                                    {"boundaries": [16, 32, 64]}, {"boundaries": [500]}])
def test_every_sample_exactly_once(shuffle, kwargs):
    lengths = lengths_for_sampler()
    sampler = LengthBucketSampler(lengths, 8, shuffle=shuffle, **kwargs)
    batches = epoch(sampler)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    assert len(batches) == len(sampler)
    assert all(1 <= len(b) <= 8 for b in batches)
    assert all(isinstance(i, int) for i in flat)


@pytest.mark.parametrize("kwargs", [{}, {"num_buckets": 3}, {"boundaries": [16, 32, 64]}])
def test_batches_stay_within_a_bucket(kwargs):
    lengths = lengths_for_sampler()
    sampler = LengthBucketSampler(lengths, 8, **kwargs)
    assert len(sampler.boundaries) + 1 == len(sampler.buckets) > 1
    for batch in epoch(sampler):
        bucket = int(sampler.bucket_of[batch[0]])
        low, high = sampler.bucket_range(bucket)
        for i in batch:
            assert low <= int(lengths[i]) and (high is None or int(lengths[i]) < high)


def test_explicit_boundaries_are_lower_inclusive():
    sampler = LengthBucketSampler([3, 4, 5, 9, 10, 11], 2, boundaries=[4, 10], shuffle=False)
    assert sampler.buckets == [[0], [1, 2, 3], [4, 5]]
    assert [sampler.bucket_range(b) for b in range(3)] == [(0, 4), (4, 10), (10, None)]
    assert epoch(sampler) == [[0], [1, 2], [3], [4, 5]]


def test_quantile_buckets_are_about_equally_full():
    lengths = lengths_for_sampler(4000)
    sampler = LengthBucketSampler(lengths, 16, num_buckets=4)
    sizes = [len(b) for b in sampler.buckets]
    assert len(sizes) == 4 and min(sizes) > 0.8 * 1000 and max(sizes) < 1.2 * 1000


def test_a_common_full_length_gets_its_own_bucket():
    lengths = data.owt_like_lengths(2000, seq=512)
    sampler = LengthBucketSampler(lengths, 16)
    assert 512 in sampler.boundaries  # the full windows: one bucket of their own
    last = sampler.buckets[-1]
    assert sampler.bucket_range(len(sampler.buckets) - 1) == (512, None)
    assert len(last) == int((lengths == 512).sum())


def test_bucketing_narrows_each_batch():
    lengths = data.wmt_like_lengths(2048)
    spread = lambda batches: np.mean([int(lengths[b].max() - lengths[b].min()) for b in batches])
    bucketed = spread(epoch(LengthBucketSampler(lengths, 32)))
    plain = spread(epoch(LengthBucketSampler(lengths, 32, num_buckets=1)))
    assert bucketed < 0.5 * plain


def test_same_seed_same_order_and_epochs_differ():
    lengths = lengths_for_sampler()
    a, b = LengthBucketSampler(lengths, 8, seed=3), LengthBucketSampler(lengths, 8, seed=3)
    assert epoch(a) == epoch(b)
    assert epoch(a) == epoch(a)  # iterating again repeats the epoch
    assert epoch(a, 1) == epoch(b, 1)
    assert epoch(a, 0) != epoch(a, 1)
    assert epoch(LengthBucketSampler(lengths, 8, seed=4)) != epoch(b, 0)


def test_shuffle_off_is_sorted_by_bucket_and_index():
    lengths = lengths_for_sampler()
    sampler = LengthBucketSampler(lengths, 8, shuffle=False)
    batches = epoch(sampler)
    assert epoch(sampler, 5) == batches  # no randomness at all
    buckets = [int(sampler.bucket_of[b[0]]) for b in batches]
    assert buckets == sorted(buckets)
    flat = [i for b in batches for i in b]
    for bucket in set(buckets):
        members = [i for i in flat if int(sampler.bucket_of[i]) == bucket]
        assert members == sorted(members)


def test_drop_last():
    lengths = lengths_for_sampler()
    sampler = LengthBucketSampler(lengths, 8, drop_last=True)
    batches = epoch(sampler)
    assert all(len(b) == 8 for b in batches) and len(batches) == len(sampler)
    flat = [i for b in batches for i in b]
    assert len(flat) == len(set(flat))
    per_bucket = collections.Counter(int(sampler.bucket_of[i]) for i in flat)
    for bucket, members in enumerate(sampler.buckets):
        assert per_bucket[bucket] == len(members) // 8 * 8
    assert len(sampler) == sum(len(m) // 8 for m in sampler.buckets)
    assert len(LengthBucketSampler(lengths, 8)) == sum(-(-len(m) // 8) for m in sampler.buckets)


def test_works_as_a_dataloader_batch_sampler():
    lengths = lengths_for_sampler(40)
    dataset = torch.utils.data.TensorDataset(torch.arange(40), lengths)
    sampler = LengthBucketSampler(lengths, 4, num_buckets=2)
    loader = torch.utils.data.DataLoader(dataset, batch_sampler=sampler)
    seen = torch.cat([index for index, _ in loader])
    assert sorted(seen.tolist()) == list(range(40))
    assert len(loader) == len(sampler)


@pytest.mark.parametrize("args,kwargs,message", [
    (([3, 4], 0), {}, r"batch_size must be a positive int, got 0"),
    (([3, 4], 2.0), {}, r"batch_size must be a positive int"),
    (([3, 4], 2), {"boundaries": [4, 4]}, r"strictly increasing, got \[4, 4\]"),
    (([3, 4], 2), {"boundaries": [5, 4]}, r"strictly increasing"),
    (([3, 4], 2), {"boundaries": [0, 4]}, r"positive ints"),
    (([3, 4], 2), {"boundaries": [2.5]}, r"positive ints"),
    (([3, 4], 2), {"boundaries": 4}, r"boundaries must be a list of ints, got int"),
    (([3, 4], 2), {"boundaries": [4], "num_buckets": 2}, r"boundaries or num_buckets, not both"),
    (([3, 4], 2), {"num_buckets": 0}, r"num_buckets must be a positive int, got 0"),
    (([3, 4], 2), {"seed": -1}, r"seed must be a non-negative int, got -1"),
    (([3, 4], 2), {"shuffle": 1}, r"shuffle must be a bool, got 1"),
    (([3, 4], 2), {"drop_last": "no"}, r"drop_last must be a bool"),
    (([], 2), {}, r"non-empty"),
    (([3, -4], 2), {}, r"non-negative"),
    ((torch.tensor([[3, 4]]), 2), {}, r"1-D"),
])
def test_sampler_argument_errors(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        LengthBucketSampler(*args, **kwargs)


def test_set_epoch_and_bucket_range_errors():
    sampler = LengthBucketSampler([3, 4], 2, boundaries=[4])
    with pytest.raises(ValueError, match="epoch must be a non-negative int"):
        sampler.set_epoch(-1)
    with pytest.raises(ValueError, match=r"bucket must be in \[0, 1\], got 2"):
        sampler.bucket_range(2)


# ------------------------------------------------------------ synthetic lengths


@pytest.mark.parametrize("fn,seq,low,high", [
    (data.wmt_like_lengths, 256, 0.12, 0.14),   # 87% padding (the VTS paper's WMT14 En-De)
    (data.owt_like_lengths, 512, 0.75, 0.85),   # 15-25% padding (OWT for BERT at 512)
])
@pytest.mark.parametrize("seed", [0, 1])
def test_valid_fractions_in_documented_ranges(fn, seq, low, high, seed):
    lengths = fn(20000, seed=seed)
    assert lengths.dtype == torch.int64 and lengths.shape == (20000,)
    assert int(lengths.min()) >= 1 and int(lengths.max()) <= seq
    assert low <= valid_fraction(lengths, seq) <= high


def test_owt_like_mostly_fills_the_window():
    lengths = data.owt_like_lengths(20000)
    full = float((lengths == 512).float().mean())
    assert 0.5 < full < 0.75
    assert int(lengths.min()) < 64  # and a tail of short documents


def test_wmt_like_is_right_skewed():
    lengths = data.wmt_like_lengths(20000).double()
    assert float(lengths.median()) < float(lengths.mean()) < 40
    assert 20 <= float(lengths.median()) <= 34


@pytest.mark.parametrize("fn", [data.wmt_like_lengths, data.owt_like_lengths])
def test_lengths_are_deterministic_per_seed(fn):
    assert torch.equal(fn(500, seed=7), fn(500, seed=7))
    assert not torch.equal(fn(500, seed=7), fn(500, seed=8))


@pytest.mark.parametrize("fn", [data.wmt_like_lengths, data.owt_like_lengths])
def test_lengths_respect_a_custom_seq(fn):
    lengths = fn(3000, seq=32)
    assert int(lengths.min()) >= 1 and int(lengths.max()) == 32
    assert len(fn(1)) == 1


@pytest.mark.parametrize("fn", [data.wmt_like_lengths, data.owt_like_lengths])
@pytest.mark.parametrize("kwargs,message", [({"n": 0}, "n must be a positive int"),
                                            ({"n": 5, "seq": 0}, "seq must be a positive int"),
                                            ({"n": 5, "seed": -2}, "seed must be a non-negative")])
def test_length_argument_errors(fn, kwargs, message):
    with pytest.raises(ValueError, match=message):
        fn(**kwargs)
