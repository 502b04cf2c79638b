"""Variable tensor shape end to end: VTS on trains exactly like VTS off
(the padded reference) and like PyTorch, while the emulator does the work of
the valid tokens only."""
import copy

import pytest
import torch

import wsc
from vts_models import (Decoder, Encoder, MaskedLMLoss, PaddedGPT, decoder_batches,
                        encoder_batches, ignore_index_loss, labelled_batches)

LENGTHS = [16, 9, 5, 12]  # one full sample, the rest right-padded


def sgd(params):
    return torch.optim.SGD(params, lr=0.1)


def train(model, loss_fn, data, vts, **options):
    model = copy.deepcopy(model)
    prog = wsc.compile(model, loss_fn, sgd(model.parameters()), data[0][0], data[0][1],
                       stream_dtype="f32", vts=vts, **options)
    losses, reports = [], []
    for x, y in data:
        losses.append(prog.step(x, y))
        reports.append(prog.report()["last_step"])
    return prog, losses, reports


def eager(model, loss_fn, data):
    model = copy.deepcopy(model)
    opt = sgd(model.parameters())
    losses = []
    for x, y in data:
        opt.zero_grad()
        loss = loss_fn(model(*x), *y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model, losses


def assert_same_training(a, b, rtol):
    (prog_a, losses_a, _), (prog_b, losses_b) = a, b
    torch.testing.assert_close(torch.tensor(losses_a), torch.tensor(losses_b), rtol=rtol, atol=0)
    got, want = prog_a.state_dict(), prog_b if isinstance(prog_b, dict) else prog_b.state_dict()
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=rtol, atol=1e-6, msg=name)


CASES = {
    "encoder": (Encoder, torch.nn.CrossEntropyLoss, encoder_batches),
    "decoder": (Decoder, MaskedLMLoss, decoder_batches),
}


@pytest.mark.parametrize("systems", [1, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_vts_matches_padded_reference(case, systems):
    make, loss, batches = CASES[case]
    torch.manual_seed(0)
    model, data = make(), batches(3, LENGTHS)
    on = train(model, loss(), data, True, systems=systems, mode="weight_streaming")
    off = train(model, loss(), data, False, systems=systems, mode="weight_streaming")
    assert_same_training(on, (off[0], off[1]), rtol=1e-5)
    # The ragged run really skipped the padding, the padded one did not.
    vts_on, vts_off = on[2][-1].get("vts"), off[2][-1].get("vts")
    assert vts_off is None
    assert vts_on["ragged"] and vts_on["valid_fraction"] == pytest.approx(sum(LENGTHS) / 64)
    reference, losses = eager(model, loss(), data)
    assert_same_training(on, (reference.state_dict(), losses), rtol=1e-4)


@pytest.mark.parametrize("systems,mode", [(1, "weight_streaming"), (2, "weight_streaming"),
                                          (1, "layer_pipelined")])
@pytest.mark.parametrize("attention_mask", [False, True])
def test_stock_ignore_index_loss_needs_no_restore(attention_mask, systems, mode):
    """The kept-label count is a whole-batch total that every sample's
    backward reads: it is all-reduced over the samples (and systems) before."""
    torch.manual_seed(3)
    model, data = PaddedGPT(attention_mask), labelled_batches(3, LENGTHS)
    on = train(model, ignore_index_loss, data, True, systems=systems, mode=mode)
    assert on[2][-1]["vts"]["ragged"]
    assert sum(s["op"] == "all_reduce" for s in on[0].schedule["steps"]) >= 1
    reference, losses = eager(model, ignore_index_loss, data)
    assert_same_training(on, (reference.state_dict(), losses), rtol=1e-4)


@pytest.mark.parametrize("case", sorted(CASES))
def test_vts_layer_pipelined(case):
    make, loss, batches = CASES[case]
    torch.manual_seed(1)
    model, data = make(), batches(2, LENGTHS)
    on = train(model, loss(), data, True, mode="layer_pipelined")
    off = train(model, loss(), data, False, mode="layer_pipelined")
    assert_same_training(on, (off[0], off[1]), rtol=1e-5)
    # Per-sample pipeline: fewer valid tokens, less modeled compute.
    vts = on[2][-1]["vts"]
    assert vts["ragged"] and vts["compute_s"] < vts["dense_compute_s"]


def test_dense_batch_keeps_padded_path():
    """vts="auto": a batch with no padding is above the threshold and runs
    dense; a padded one runs ragged."""
    torch.manual_seed(2)
    model = Encoder()
    full, padded = encoder_batches(1, [16] * 4)[0], encoder_batches(1, LENGTHS)[0]
    prog = wsc.compile(model, torch.nn.CrossEntropyLoss(), sgd(model.parameters()), *padded,
                       stream_dtype="f32", mode="weight_streaming")
    assert prog.report()["vts_decision"].startswith("VTS: ")
    prog.step(*full)
    assert not prog.report()["last_step"]["vts"]["ragged"]
    prog.step(*padded)
    assert prog.report()["last_step"]["vts"]["ragged"]


def test_left_padding_is_an_error():
    torch.manual_seed(3)
    model = Encoder()
    (ids, valid), y = encoder_batches(1, LENGTHS)[0]
    prog = wsc.compile(model, torch.nn.CrossEntropyLoss(), sgd(model.parameters()), (ids, valid),
                       y, stream_dtype="f32", mode="weight_streaming", vts=True)
    holes = valid.clone()
    holes[1, 0] = False  # a pad before valid tokens
    with pytest.raises(ValueError, match="sample 1"):
        prog.step((ids, holes), y)
