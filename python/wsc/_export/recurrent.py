"""nn.RNN / nn.GRU / nn.LSTM and their cells, unrolled into plain tensor ops while capturing.

The stock forward of a recurrent layer calls one fused kernel (``_VF.gru``
...) on ``self._flat_weights``, a list of the real parameters that
``functional_call`` does not swap, so fake-tensor tracing meets real tensors
and fails; the cells' kernels decompose into ``unsafe_split``, which the
lowering table lacks. While a capture runs, :func:`unrolled` gives each such
module (an instance attribute, so nothing global changes) a forward that loops
over the sequence with the gate formulas, gate order and addition order of
PyTorch's CPU kernels (aten/src/ATen/native/RNN.cpp). It reads the parameters
by their own names (``weight_ih_l0``, ``bias_hh_l1_reverse`` ...), so the
graph's arguments keep their state_dict keys; it runs inside the module's
``__call__``, so the provenance hooks attribute the unrolled ops to the layer.
The graph gets linear, add, mul, sigmoid, tanh, relu, split, select and cat,
and, between layers in training, dropout's random draw (draws.py).
"""

import contextlib
from typing import List, Optional

import torch
import torch.nn.functional as F
from torch import nn

from .errors import UnsupportedOpError

Tensor = torch.Tensor
_CELLS = (nn.RNNCell, nn.GRUCell, nn.LSTMCell)


@contextlib.contextmanager
def unrolled(model: nn.Module):
    """Within the block, every recurrent module of ``model`` runs unrolled."""
    model_inputs: List[Tensor] = []  # of the current call, to spot time-major ones

    def remember_inputs(_, args):
        model_inputs[:] = [a for a in args if isinstance(a, Tensor)]

    patched = []
    for path, module in model.named_modules():
        if isinstance(module, (nn.RNNBase,) + _CELLS):
            module.forward = _forward_for(module, _where(module, path), model_inputs)
            patched.append(module)
    handle = model.register_forward_pre_hook(remember_inputs) if patched else None
    try:
        yield
    finally:
        for module in patched:
            del module.forward
        if handle is not None:
            handle.remove()


def _where(module, path) -> str:
    # Taken before functional_call swaps the class (to StatelessReplacer...).
    return f"module '{path}', {type(module).__name__}" if path else \
        f"the top-level module, {type(module).__name__}"


def _forward_for(module, where, model_inputs):
    base = next((c for c in (nn.RNN, nn.GRU, nn.LSTM) + _CELLS if isinstance(module, c)), None)
    if base is None or type(module).forward is not base.forward:
        def refuse(*args, **kwargs):
            raise UnsupportedOpError(
                f"{where} has a forward of its own; the wsc exporter unrolls only the stock "
                "forward of nn.RNN, nn.GRU, nn.LSTM and their cells")
        return refuse
    if isinstance(module, _CELLS):
        return lambda input, hx=None: _cell_forward(module, where, input, hx)
    return lambda input, hx=None: _layer_forward(module, where, input, hx, model_inputs)


def _check_batch_major(module, where, input, model_inputs):
    """wsc shards every model input along dim 0, so a model input that a layer
    reads with the time in dim 0 would be split along the sequence."""
    time_major = not module.batch_first or input.dim() == 2
    index = next((i for i, x in enumerate(model_inputs) if x is input), None)
    if time_major and index is not None:
        layout = "(sequence, features)" if input.dim() == 2 else "(sequence, batch, features)"
        raise UnsupportedOpError(
            f"{where} reads model input {index} of shape {list(input.shape)} "
            f"as {layout}, but wsc takes dim 0 of every input as the batch: pass "
            "batch-first inputs (and batch_first=True, or transpose in the model)")


# ------------------------------------------------------------ one step
# Each takes the input projection ``gi`` (x W_ih^T + b_ih) and the state.

def _simple_cell(mode, gi, h, w_hh, b_hh):
    pre = F.linear(h, w_hh, b_hh) + gi
    return torch.tanh(pre) if mode == "RNN_TANH" else torch.relu(pre)


def _gru_cell(gi, h, w_hh, b_hh):
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
    reset = torch.sigmoid(h_r + i_r)
    update = torch.sigmoid(h_z + i_z)
    new = torch.tanh(i_n + h_n * reset)  # n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
    return (h - new) * update + new       # (1 - z) * n + z * h, as RNN.cpp computes it


def _lstm_cell(gi, state, w_hh, b_hh, w_hr):
    h, c = state
    gates = F.linear(h, w_hh, b_hh) + gi
    i, f, g, o = gates.chunk(4, -1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    h = torch.sigmoid(o) * torch.tanh(c)
    if w_hr is not None:  # proj_size > 0
        h = F.linear(h, w_hr)
    return h, c


def _step(mode, gi, state, w_hh, b_hh, w_hr=None):
    if mode == "LSTM":
        return _lstm_cell(gi, state, w_hh, b_hh, w_hr)
    if mode == "GRU":
        return _gru_cell(gi, state, w_hh, b_hh)
    return _simple_cell(mode, gi, state, w_hh, b_hh)


# ------------------------------------------------------------ full layers

def _layer_forward(module: nn.RNNBase, where: str, input, hx, model_inputs):
    if not isinstance(input, Tensor):  # PackedSequence
        raise UnsupportedOpError(
            f"{where} is given a {type(input).__name__}; the wsc exporter "
            "supports recurrent layers on padded tensors only")
    _check_batch_major(module, where, input, model_inputs)
    lstm = module.mode == "LSTM"
    batched = input.dim() == 3
    batch_dim = 0 if module.batch_first else 1
    if not batched:
        input = input.unsqueeze(batch_dim)
        if hx is not None:
            hx = tuple(t.unsqueeze(1) for t in hx) if lstm else hx.unsqueeze(1)
    if hx is None:
        hx = _zero_state(module, input, batch_dim)
    module.check_forward_args(input, hx, None)  # torch's own shape checks and messages

    time_dim = 1 - batch_dim
    directions = 2 if module.bidirectional else 1
    layer_input, finals = input, []
    for layer in range(module.num_layers):
        outputs = []
        for direction in range(directions):
            index = layer * directions + direction
            state = (hx[0][index], hx[1][index]) if lstm else hx[index]
            out, state = _run_direction(module, layer, direction, layer_input, state, time_dim)
            outputs.append(out)
            finals.append(state)
        layer_input = outputs[0] if directions == 1 else torch.cat(outputs, -1)
        if module.dropout and module.training and layer < module.num_layers - 1:
            layer_input = _dropout(layer_input, module.dropout, time_dim)

    output = layer_input
    if lstm:
        hidden = (torch.stack([h for h, _ in finals]), torch.stack([c for _, c in finals]))
    else:
        hidden = torch.stack(finals)
    if not batched:
        output = output.squeeze(batch_dim)
        hidden = tuple(t.squeeze(1) for t in hidden) if lstm else hidden.squeeze(1)
    return output, hidden


def _dropout(x, p, time_dim):
    """Dropout between layers as RNN.cpp: at::dropout, whose bernoulli_ draw
    (draws.py) is taken time-major, as the fused kernel transposes a
    batch-first input first; so replayed draws match eager's element for element."""
    if time_dim == 0:
        return F.dropout(x, p, training=True)
    return F.dropout(x.transpose(0, 1), p, training=True).transpose(0, 1)


def _zero_state(module, input, batch_dim):
    directions = 2 if module.bidirectional else 1
    batch = input.size(batch_dim)
    h_size = module.proj_size if getattr(module, "proj_size", 0) > 0 else module.hidden_size
    h0 = torch.zeros(module.num_layers * directions, batch, h_size, dtype=input.dtype,
                     device=input.device)
    if module.mode != "LSTM":
        return h0
    c0 = torch.zeros(module.num_layers * directions, batch, module.hidden_size,
                     dtype=input.dtype, device=input.device)
    return h0, c0


def _run_direction(module, layer, direction, xs, state, time_dim):
    """One layer in one direction over the whole sequence: (outputs, final state)."""
    suffix = f"_l{layer}" + ("_reverse" if direction else "")
    param = lambda name: getattr(module, name + suffix) if hasattr(module, name + suffix) \
        else None
    w_ih, w_hh = param("weight_ih"), param("weight_hh")
    b_ih, b_hh = (param("bias_ih"), param("bias_hh")) if module.bias else (None, None)
    w_hr = param("weight_hr")
    gi = F.linear(xs, w_ih, b_ih)  # the input projection of every step at once, as RNN.cpp
    steps = range(xs.size(time_dim))
    outputs: List[Optional[Tensor]] = [None] * len(steps)
    for t in (reversed(steps) if direction else steps):
        state = _step(module.mode, gi.select(time_dim, t), state, w_hh, b_hh, w_hr)
        outputs[t] = state[0] if module.mode == "LSTM" else state
    return torch.stack(outputs, time_dim), state


# ---------------------------------------------------------- cell modules

def _cell_forward(module, where: str, input, hx):
    lstm = isinstance(module, nn.LSTMCell)
    if input.dim() not in (1, 2) or input.size(-1) != module.input_size:
        raise ValueError(f"{where} expects input of shape (N, "
                         f"{module.input_size}) or ({module.input_size},), got "
                         f"{list(input.shape)}")
    batched = input.dim() == 2
    if not batched:
        input = input.unsqueeze(0)
        if hx is not None:
            hx = tuple(t.unsqueeze(0) for t in hx) if lstm else hx.unsqueeze(0)
    if hx is None:
        zeros = torch.zeros(input.size(0), module.hidden_size, dtype=input.dtype,
                            device=input.device)
        hx = (zeros, zeros) if lstm else zeros
    mode = "LSTM" if lstm else "GRU" if isinstance(module, nn.GRUCell) else (
        "RNN_TANH" if module.nonlinearity == "tanh" else "RNN_RELU")
    gi = F.linear(input, module.weight_ih, module.bias_ih if module.bias else None)
    out = _step(mode, gi, hx, module.weight_hh, module.bias_hh if module.bias else None)
    if not batched:
        out = tuple(t.squeeze(0) for t in out) if lstm else out.squeeze(0)
    return out
