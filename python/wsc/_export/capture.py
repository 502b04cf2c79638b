"""Check the user's arguments and capture one step with make_fx.

The training step is traced as ``(params, buffers, inputs, labels) -> (loss,
*grads, *updated buffers)`` with ``functional_call`` + ``torch.autograd.grad``,
so forward, loss and backward all land in one flat aten graph.

Buffers (non-trainable state such as BatchNorm's running statistics) become
arguments after the parameters (``wsc.buffer``). The training step returns
the buffers it mutates (``wsc.buffer_update``): make_fx records the mutation
as in-place aten ops (``add_`` on num_batches_tracked, native_batch_norm
writing its running statistics), so a buffer counts as updated when an op's
schema writes to its placeholder.

Helpers this module calls (none calls back): provenance.py stamps each
captured node with the module it came from, draws.py lifts random ops,
recurrent.py unrolls RNNs, loss_rewrites.py and constants.py make losses
traceable.
"""

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import torch
import torch.fx
from torch._decomp import get_decompositions
from torch.fx.experimental.proxy_tensor import make_fx
from torch.nn.utils import stateless

from .._batch_dims import as_written, batch_first
from .composites import COMPOSITES, checkpoints_run_once, traceable_functions
from .constants import ConstantsMode, model_state
from .draws import lift_draws, out_of_place_dropout
from .errors import Unsupported, UnsupportedOpError, refused_while_tracing, trace_failure
from .lowering.inplace import restore_traced_shapes, with_inplace_variants
from .loss_rewrites import LOSS_DECOMPOSITIONS, traceable_losses
from .names import use_linear_names
from .provenance import Provenance, describe
from .recurrent import unrolled
from . import mutation, repeated

aten = torch.ops.aten

# Composite ops rewritten into the simple aten ops the lowering table knows.
# These decompositions (torch/_decomp/decompositions.py, or refs that only
# call torch ops, never prims) follow the eager kernels' formulas, e.g.
# log_softmax subtracts the max. nll_loss is deliberately absent: its
# decomposition divides by a data-dependent count (see lowering/losses.py).
# In-place twins of these (silu_, hardswish_, ..) decompose into the functional
# op and a copy_ (lowering/inplace.py). GroupNorm's decompositions are ports
# of the eager CPU kernels (mean and biased variance per (sample, group); the
# backward's c1/c2/c3 coefficients).
DECOMPOSITIONS = with_inplace_variants(get_decompositions([
    aten.addmm, aten.gelu, aten.gelu_backward, aten.tanh_backward, aten.sigmoid_backward,
    aten.threshold_backward, aten.mse_loss, aten.mse_loss_backward, aten._log_softmax,
    aten._log_softmax_backward_data, aten._softmax, aten._softmax_backward_data,
    aten.native_dropout, aten.native_dropout_backward, aten.silu, aten.silu_backward,
    aten.leaky_relu_backward, aten.hardtanh_backward, aten.rsub, aten.elu,
    aten.softplus, aten.softplus_backward, aten.native_layer_norm, aten.native_layer_norm_backward,
    aten.hardswish, aten.hardswish_backward, aten.hardsigmoid, aten.hardsigmoid_backward,
    aten.native_group_norm, aten.native_group_norm_backward,
    aten.mv, aten.dot,  # matrix @ vector, vector @ vector: a product and a sum
    aten.repeat, aten.roll,  # views, copies, slices and cat
    aten.binary_cross_entropy, aten.binary_cross_entropy_backward, aten.xlogy,
    aten.log_sigmoid_forward, aten.log_sigmoid_backward,
]))
DECOMPOSITIONS.update(COMPOSITES)  # upsampling, prelu, pixel_shuffle, norms, gathers
DECOMPOSITIONS.update(LOSS_DECOMPOSITIONS)  # BCE with logits, Huber, SmoothL1 losses
# The wsc.nn VTS markers (torch.ops.wsc.strip_padding / restore_padding) must
# reach the graph as they are, so they stay out of this table; make_fx does
# not inline them either, as they have no CompositeImplicitAutograd kernel.

# Model inputs: features, token ids (int64) and masks (bool).
INPUT_DTYPES = [torch.float32, torch.int64, torch.bool]
# Buffer dtypes the exporter can pass as arguments (f32, i64, i1 tensors).
BUFFER_DTYPES = (torch.float32, torch.int64, torch.bool)


class Captured(NamedTuple):
    graph: torch.fx.GraphModule
    params: List[Tuple[str, torch.Tensor]]   # state_dict order
    inputs: Tuple[torch.Tensor, ...]
    labels: Tuple[torch.Tensor, ...]
    num_classes: Dict[int, int]               # label index -> C, for integer labels
    buffers: List[Tuple[str, torch.Tensor]] = []  # arguments after the parameters
    buffer_updates: List[str] = []            # buffers, then parameters, the step writes in place
    randoms: List[Tuple[int, ...]] = []       # shapes of the uniform draws (draws.py), last
    ignore_index: Dict[int, int] = {}         # label index -> an ignore_index outside [0, C)


def named_parameters(model) -> List[Tuple[str, torch.Tensor]]:
    """Trainable parameters in state_dict order, each once (tied ones by their first key)."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    param_ids = {id(p) for p in model.parameters()}
    params, seen = [], set()
    for name, value in model.state_dict(keep_vars=True).items():
        if id(value) in seen or id(value) not in param_ids:  # buffers: named_buffers
            continue
        seen.add(id(value))
        if not value.requires_grad:
            raise ValueError(f"parameter '{name}' has requires_grad=False; frozen "
                             "parameters are not supported")
        if value.dtype != torch.float32:
            raise TypeError(f"parameter '{name}' has dtype {value.dtype}; wsc supports float32")
        params.append((name, value))
    if not params:
        raise ValueError("the model has no parameters")
    return params


def named_buffers(model: torch.nn.Module) -> List[Tuple[str, torch.Tensor]]:
    """Persistent buffers in state_dict order, then non-persistent ones, each once."""
    ids = {id(b) for _, b in model.named_buffers()}
    found, seen = [], set()
    persistent = [(k, v) for k, v in model.state_dict(keep_vars=True).items() if id(v) in ids]
    for name, value in persistent + list(model.named_buffers()):
        if id(value) in seen:
            continue
        seen.add(id(value))
        if value.dtype not in BUFFER_DTYPES:
            raise TypeError(f"buffer '{name}' has dtype {str(value.dtype).replace('torch.', '')}; "
                            "wsc supports float32, int64 and bool buffers")
        found.append((name, value))
    return found


def state_names(model: torch.nn.Module) -> Dict[int, List[str]]:
    """id(parameter or buffer) -> every dotted name it has in the module tree
    (tied weights and shared buffers have several; functional_call binds them all)."""
    out: Dict[int, List[str]] = {}
    for prefix, module in model.named_modules(remove_duplicate=False):
        for table in (module._parameters, module._buffers):
            for name, value in table.items():
                if value is None:
                    continue
                names = out.setdefault(id(value), [])
                key = f"{prefix}.{name}" if prefix else name
                if key not in names:
                    names.append(key)
    return out


def mutated(gm: torch.fx.GraphModule, first: int, names: Sequence[str]) -> List[str]:
    """Names of the buffers (placeholders ``first``, ``first + 1``, ..) that the graph
    writes to in place."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"][first:first + len(names)]
    written = mutation.written(gm.graph)
    return [name for name, node in zip(names, placeholders) if node in written]


def keep_updated(gm: torch.fx.GraphModule, first_placeholder: int, first_output: int,
                 names: Sequence[str]) -> List[str]:
    """The graph returns every buffer after ``first_output``; keep only the updated
    ones (in argument order) and return their names."""
    output = next(n for n in gm.graph.nodes if n.op == "output")
    results = list(output.args[0])
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    written = mutation.written(gm.graph)
    kept, names_kept = [], []
    for i, name in enumerate(names):
        value, arg = results[first_output + i], placeholders[first_placeholder + i]
        if value is not arg or arg in written:  # an in-place op replaced or wrote it
            kept.append(value)
            names_kept.append(name)
    output.args = (tuple(results[:first_output] + kept),)
    if mutation.drop_dead_code(gm.graph) or len(kept) < len(names):
        gm.recompile()  # seconds for a GPT-3: only when the graph changed
    return names_kept


def as_tensors(value, what: str, dtypes: Sequence[torch.dtype]) -> Tuple[torch.Tensor, ...]:
    """A tensor or tuple of tensors, checked for dtype and a batch dim."""
    items = (value,) if isinstance(value, torch.Tensor) else value
    if not isinstance(items, (tuple, list)) or not items or not all(
            isinstance(t, torch.Tensor) for t in items):
        raise TypeError(f"{what} must be a tensor or a non-empty tuple of tensors, "
                        f"got {type(value).__name__}")
    for i, t in enumerate(items):
        if t.dtype not in dtypes:
            allowed = " or ".join(str(d).replace("torch.", "") for d in dtypes)
            raise TypeError(f"{what}[{i}] has dtype {str(t.dtype).replace('torch.', '')}; "
                            f"expected {allowed}")
        if t.dim() == 0 or t.shape[0] == 0:
            raise ValueError(f"{what}[{i}] must have a non-empty batch dimension (dim 0), "
                             f"got shape {list(t.shape)}")
    return tuple(t.detach() for t in items)


def _fake_inputs(args, model):
    """A fake-tensor mode to trace in, and ``args`` as its fake tensors.

    Plain tensors the step reads besides its arguments (a loss's class
    weights) become constants of the graph (constants.py). A model built
    with ``device="meta"`` (or ``.to("meta")``) has shapes but no storage, so
    even GPT-3-sized graphs trace in little memory. Its tensors become fake
    CPU tensors of the mode, which also fakes the tensors ``forward``
    creates (``torch.arange`` ...), so devices agree.
    """
    from torch._subclasses.fake_tensor import FakeTensor
    meta = any(isinstance(a, torch.Tensor) and a.is_meta for a in args)
    # Fallback kernels run an op without a meta kernel on zeros: a meta model has none.
    mode = ConstantsMode(model_state(model), allow_fallback_kernels=not meta)
    cpu = torch.device("cpu")
    faked = []
    for a in args:
        if a.is_meta:
            fake = FakeTensor(mode, a.detach(), cpu)
            faked.append(fake.requires_grad_(a.requires_grad))
        else:
            faked.append(mode.from_tensor(a))
    return mode, faked


def _trace(fn, args, provenance: Provenance, grad: bool, linear_names: bool):
    """make_fx ``fn`` with recurrent layers unrolled and in-place dropout out of
    place (draws.out_of_place_dropout), every node stamped with its module
    (provenance.py) and named in constant time (names.py, unless
    ``linear_names`` is False); a failure inside torch (an op fake tensors
    cannot run, a shape the op rejects) becomes a short UnsupportedOpError
    naming the op and the module (errors.trace_failure)."""
    def traced(*flat):
        graph = provenance.attach_to_trace()
        if graph is not None and linear_names:
            use_linear_names(graph)
        return fn(*flat)

    try:
        mode, args = _fake_inputs(args, provenance.model)
        with provenance.hooks(), unrolled(provenance.model), traceable_losses(), \
                traceable_functions(), checkpoints_run_once(), \
                out_of_place_dropout(provenance.model), \
                torch.set_grad_enabled(grad), mode:
            gm = make_fx(traced, decomposition_table=DECOMPOSITIONS, tracing_mode="real")(*args)
        return restore_traced_shapes(gm)  # outside the fake mode: it makes meta tensors
    except UnsupportedOpError:
        raise
    except Unsupported as err:  # a rewrite in composites.py refused its arguments
        raise refused_while_tracing(err, provenance.where()) from None
    except Exception as err:
        short = trace_failure(err, provenance.where())
        if short is None:  # raised by the model's or the exporter's own code
            raise
        raise short from None
    finally:
        provenance.detach()


def _param_leaves(params):
    return [p.detach().requires_grad_(True) for _, p in params]


def _buffer_values(buffers):
    # Copies: tracing runs the step's in-place buffer updates.
    return [b.detach().clone() for _, b in buffers]


def _bind(params, aliases, traced) -> Dict[str, torch.Tensor]:
    """functional_call's dict: every name of a parameter or buffer -> its traced value."""
    return {alias: t for (_, orig), t in zip(params, traced) for alias in aliases[id(orig)]}


def _state(params, buffers) -> List[str]:
    return [name for name, _ in params] + [name for name, _ in buffers]


def _captured_graph(model, params, buffers, reference: bool, trace) -> torch.fx.GraphModule:
    """The step's graph: instantiated from a few blocks of a deep stack of
    identical blocks (repeated.py) when the model has one, else traced whole.
    ``reference``: trace every block with fx's own namer, as the export did
    before repeated.py and names.py (tests and the bench compare the two)."""
    if not reference:
        gm = repeated.capture(model, state_names(model), _state(params, buffers),
                              lambda: trace(True))
        if gm is not None:
            return gm
    return trace(not reference).graph


def _training_trace(model, loss_fn, inputs, labels, outputs: dict, linear_names: bool,
                    dims: Sequence[int]) -> repeated.Traced:
    """make_fx of the training step of ``model`` as it is now (repeated.py
    traces it with its stack of blocks cut short). The step takes ``inputs``
    and ``labels`` batch-first and moves each batch back to its dim in
    ``dims`` (_batch_dims.py)."""
    params = named_parameters(model)
    provenance = Provenance(model, loss_fn)
    buffers = named_buffers(model)
    aliases = state_names(model)
    n_params, n_inputs = len(params), len(inputs)
    n_state = n_params + len(buffers)
    names = [name for name, _ in params]

    def train_step(*flat):
        ps, bs = flat[:n_params], flat[n_params:n_state]
        xs = as_written(flat[n_state:n_state + n_inputs], dims[:n_inputs])
        ys = as_written(flat[n_state + n_inputs:], dims[n_inputs:])
        out = stateless.functional_call(model, _bind(params + buffers, aliases, ps + bs),
                                        tuple(xs))
        with provenance.scope(provenance.loss_scope):
            loss = loss_fn(out, *ys)
        provenance.claim(loss, provenance.loss_scope, inputs=out)
        if not isinstance(loss, torch.Tensor) or loss.dim() != 0 or loss.dtype != torch.float32:
            raise ValueError("loss_fn must return a scalar float32 tensor, got "
                             + (f"shape {list(loss.shape)} {loss.dtype}"
                                if isinstance(loss, torch.Tensor) else type(loss).__name__))
        outputs["model"] = out
        with provenance.backward(loss):
            grads = torch.autograd.grad(loss, ps, allow_unused=True)
        unused = [n for n, g in zip(names, grads) if g is None]
        if unused:
            raise ValueError(f"parameters that do not affect the loss: {', '.join(unused)}")
        return (loss, *grads, *bs)  # every buffer; keep_updated drops the unchanged ones

    gm = _trace(train_step, _param_leaves(params) + _buffer_values(buffers) + list(inputs)
                + list(labels), provenance, True, linear_names)
    return repeated.Traced(gm, _state(params, buffers), 1)


def capture_training(model, loss_fn, inputs, labels, *, reference: bool = False,
                     batch_dims: Optional[Sequence[int]] = None) -> Captured:
    """The training step, taking ``inputs`` and ``labels`` batch-first:
    ``batch_dims`` (one per input, then per label; all 0 by default) says
    where each tensor's batch is as the model and the loss see it."""
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
    params = named_parameters(model)
    inputs = as_tensors(inputs, "example_inputs", INPUT_DTYPES)
    labels = as_tensors(labels, "example_targets", [torch.float32, torch.int64])
    dims = tuple(batch_dims) if batch_dims is not None else (0,) * (len(inputs) + len(labels))
    inputs, labels = batch_first(inputs, dims[:len(inputs)]), batch_first(labels, dims[len(inputs):])
    buffers = named_buffers(model)
    outputs = {}
    gm = _captured_graph(model, params, buffers, reference, lambda linear_names: _training_trace(
        model, loss_fn, inputs, labels, outputs, linear_names, dims))
    n_params = len(params)
    mutation.refuse_lost_writes(gm, params, buffers)
    updates = keep_updated(gm, n_params, 1 + n_params, [name for name, _ in buffers])
    updates += mutation.return_written_parameters(gm, params)
    mutation.drop_dead_code(gm.graph)
    num_classes, ignore_index = _label_ranges(gm.graph, n_params + len(buffers) + len(inputs),
                                              labels, outputs.get("model"))
    return Captured(gm, params, inputs, labels, num_classes, buffers, updates,
                    lift_draws(gm, describe), ignore_index)


def _inference_trace(model, inputs, linear_names: bool) -> repeated.Traced:
    params = named_parameters(model)
    provenance = Provenance(model)
    buffers = named_buffers(model)
    aliases = state_names(model)
    n_params = len(params)
    n_state = n_params + len(buffers)

    def forward(*flat):
        ps, bs, xs = flat[:n_params], flat[n_params:n_state], flat[n_state:]
        out = stateless.functional_call(model, _bind(params + buffers, aliases, ps + bs),
                                        tuple(xs))
        flat_out, _ = torch.utils._pytree.tree_flatten(out)
        if not flat_out or not all(isinstance(t, torch.Tensor) for t in flat_out):
            raise ValueError("the model must return a tensor or a (nested) tuple of tensors")
        return tuple(flat_out)

    gm = _trace(forward, [p.detach() for _, p in params] + _buffer_values(buffers)
                + list(inputs), provenance, False, linear_names)
    return repeated.Traced(gm, _state(params, buffers), None)


def capture_inference(model, inputs, *, reference: bool = False) -> Captured:
    params = named_parameters(model)
    inputs = as_tensors(inputs, "example_inputs", INPUT_DTYPES)
    buffers = named_buffers(model)
    gm = _captured_graph(model, params, buffers, reference,
                         lambda linear_names: _inference_trace(model, inputs, linear_names))
    mutation.refuse_lost_writes(gm, params, buffers)
    updated = mutated(gm, len(params), [name for name, _ in buffers])
    if updated:
        raise ValueError(f"the forward pass updates buffers ({', '.join(updated)}), but "
                         "inference treats buffers as read-only; call model.eval() first "
                         "(e.g. training-mode BatchNorm updates its running statistics)")
    mutation.drop_dead_code(gm.graph)
    return Captured(gm, params, inputs, (), {}, buffers, [], lift_draws(gm, describe))


def _label_ranges(graph: torch.fx.Graph, first_label: int, labels,
                  model_output) -> Tuple[Dict[int, int], Dict[int, int]]:
    """For each integer label: C, the class dim of the nll_loss that reads it,
    else the last dim of the model output; and that nll_loss's ignore_index
    when it lies outside [0, C) (the runtime accepts it besides the classes)."""
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    label_of = {placeholders[first_label + i]: i for i in range(len(labels))}
    found: Dict[int, int] = {}
    ignored: Dict[int, int] = {}
    for node in graph.nodes:
        if node.op == "call_function" and node.target in (aten.nll_loss_forward.default,
                                                          aten.nll_loss2d_forward.default):
            source = node.args[1]
            while isinstance(source, torch.fx.Node) and source not in label_of and source.args:
                source = source.args[0]  # through views/aliases of the label
            if source not in label_of:
                continue
            i = label_of[source]
            shape = node.args[0].meta["val"].shape
            found[i] = classes = int(shape[1] if len(shape) > 1 else shape[0])
            ignore = int(node.args[4])
            if not 0 <= ignore < classes:
                if ignored.setdefault(i, ignore) != ignore:
                    raise ValueError(f"example_targets[{i}] is read by losses with different "
                                     f"ignore_index values ({ignored[i]} and {ignore})")
    result = {}
    for i, t in enumerate(labels):
        if t.dtype == torch.int64:
            if i in found:
                result[i] = found[i]
            elif isinstance(model_output, torch.Tensor) and model_output.dim():
                result[i] = int(model_output.shape[-1])
    return result, ignored
