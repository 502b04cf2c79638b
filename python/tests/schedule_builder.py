"""Builds wsc schedules (docs/ScheduleFormat.md) by hand, for runtime tests.

The compiler normally writes schedules; these tests need small ones whose
every value is known, so this module spells them out op by op. It is the one
Python builder: runtime_models.py builds the schedules the runtime tests and
benchmarks use with it, and so do the generators of the checked-in schedules
in unittests/Runtime/Inputs. TARGET is the one target they carry, and
unittests/Runtime/TestUtil.h (the C++ builder) carries the same.
"""

import json

# CS-2 figures (include/wsc/Model/CostModel.h) but for a 1e14 FLOP/s MemoryX.
TARGET = {
    "pe_x": 924, "pe_y": 920, "sram_per_pe_bytes": 49152, "clock_hz": 1.1e9,
    "fmac_per_pe_per_cycle": 4, "io_bytes_per_s": 1.5e11,
    "swarmx_fanout": 4, "swarmx_hop_latency_s": 1e-6,
    "memx_capacity_bytes": 4e12, "memx_flops_per_s": 1e14,
    "fabric_bytes_per_cycle": 4,
}

DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i1": 1, "index": 8}


def dim(d, c=1):
    return [[d, c]]


def const_expr(c=0):
    return [{"const": c}]


def identity_map(rank):
    return [dim(i) for i in range(rank)]


def _ragged(dims, mask):
    """A value's "ragged" entry: its dims padded to the samples' valid
    lengths of VTS mask group `mask` (None: a dense value)."""
    return None if dims is None else {"mask": mask, "dims": list(dims)}


class Region:
    """Scalar ops of a linalg region; values are rank-0 schedule values."""

    def __init__(self, sb, arg_dtypes):
        self.sb = sb
        self.args = [sb.value([], dt) for dt in arg_dtypes]
        self.ops = []
        self.yields = []

    def _op(self, name, operands, dtype, **fields):
        r = self.sb.value([], dtype)
        op = {"op": name, "operands": list(operands), "results": [r]}
        op.update(fields)
        self.ops.append(op)
        return r

    def dtype(self, v):
        return self.sb.values[v]["dtype"]

    def const(self, value, dtype="f32"):
        return self._op("arith.constant", [], dtype, value=value)

    def index(self, d):
        return self._op("linalg.index", [], "index", dim=d)

    def cmpf(self, pred, a, b):
        return self._op("arith.cmpf", [a, b], "i1", predicate=pred)

    def cmpi(self, pred, a, b):
        return self._op("arith.cmpi", [a, b], "i1", predicate=pred)

    def select(self, c, a, b):
        return self._op("arith.select", [c, a, b], self.dtype(a))

    def cast(self, name, a, dtype):
        return self._op(name, [a], dtype)

    def __getattr__(self, name):
        # addf(a, b), mulf(a, b), exp(a), ...: result dtype of the first operand.
        prefix = "math." if name in ("exp", "log", "tanh", "sqrt", "rsqrt", "erf",
                                     "absf", "powf", "log1p", "expm1") else "arith."
        def build(*operands):
            return self._op(prefix + name, operands, self.dtype(operands[0]))
        return build

    def extract(self, tensor, *indices):
        """tensor.extract from a kernel-body tensor (a gather)."""
        return self._op("tensor.extract", [tensor] + list(indices), self.dtype(tensor))

    def yield_(self, *vals):
        self.yields = list(vals)

    def to_json(self):
        return {"args": self.args, "ops": self.ops, "yields": self.yields}


class Body:
    """Ops of one kernel body."""

    def __init__(self, sb, operand_ids, arg_ragged=None):
        """An argument is like its operand; arg_ragged (operand index ->
        dims) makes a non-batch operand's argument ragged: each sample reads
        its leading block."""
        self.sb = sb
        arg_ragged = arg_ragged or {}
        self.args = [sb.clone_value(v, arg_ragged.get(i, "same"))
                     for i, v in enumerate(operand_ids)]
        self.ops = []

    def spec(self, v):
        return self.sb.values[v]

    # Values made in the body take `ragged`: the dims padded per sample
    # (variable tensor shapes), None for a dense value.

    def empty(self, shape, dtype="f32", batch_dim=None, ragged=None):
        r = self.sb.value(shape, dtype, batch_dim, ragged=ragged)
        self.ops.append({"op": "tensor.empty", "operands": [], "results": [r]})
        return r

    def empty_like(self, v):
        """tensor.empty of `v`'s shape, dtype, batch dim and ragged dims."""
        r = self.sb.clone_value(v)
        self.ops.append({"op": "tensor.empty", "operands": [], "results": [r]})
        return r

    def constant(self, value, shape, dtype="f32", batch_dim=None, ragged=None):
        r = self.sb.value(shape, dtype, batch_dim, ragged=ragged)
        self.ops.append({"op": "arith.constant", "operands": [], "results": [r], "value": value})
        return r

    def reshape(self, kind, x, shape, reassociation, batch_dim=None, ragged=None):
        r = self.sb.value(shape, self.spec(x)["dtype"], batch_dim, ragged=ragged)
        self.ops.append({"op": "tensor." + kind + "_shape", "operands": [x], "results": [r],
                         "reassociation": reassociation})
        return r

    def extract_slice(self, x, offsets, sizes, strides, shape=None, batch_dim=None, ragged=None):
        """``shape`` defaults to ``sizes`` (give it to drop unit dims)."""
        r = self.sb.value(shape if shape is not None else sizes, self.spec(x)["dtype"], batch_dim,
                          ragged=ragged)
        self.ops.append({"op": "tensor.extract_slice", "operands": [x], "results": [r],
                         "offsets": offsets, "sizes": sizes, "strides": strides})
        return r

    def insert_slice(self, piece, dest, offsets, sizes, strides):
        r = self.sb.clone_value(dest)
        self.ops.append({"op": "tensor.insert_slice", "operands": [piece, dest], "results": [r],
                         "offsets": offsets, "sizes": sizes, "strides": strides})
        return r

    def generic(self, ins, outs, maps, iterators, build, name="linalg.generic"):
        """build(region, *block_args) must call region.yield_(...)."""
        operands = list(ins) + list(outs)
        region = Region(self.sb, [self.spec(v)["dtype"] for v in operands])
        build(region, *region.args)
        results = [self.sb.clone_value(o) for o in outs]
        self.ops.append({"op": "linalg", "name": name, "operands": operands,
                         "num_inputs": len(ins), "results": results,
                         "iterators": iterators, "maps": maps, "region": region.to_json()})
        return results[0] if len(results) == 1 else results

    # Common structured ops -------------------------------------------------

    def fill(self, value, shape, dtype="f32", batch_dim=None, ragged=None):
        return self.fill_into(value, self.empty(shape, dtype, batch_dim, ragged))

    def fill_into(self, value, out):
        """linalg.fill of `out` (an empty tensor already made) with `value`."""
        spec = self.spec(out)
        rank = len(spec["shape"])
        return self.generic([], [out], [identity_map(rank)], ["parallel"] * rank,
                            lambda r, o: r.yield_(r.const(value, spec["dtype"])),
                            name="linalg.fill")

    def matmul(self, a, b, a_map, b_map, out_shape, batch_dim=None, init=None):
        """out[d0, d1] = sum_d2 a[a_map] * b[b_map]; maps use d0 (rows), d1 (cols), d2 (k)."""
        out = init if init is not None else self.fill(0.0, out_shape, batch_dim=batch_dim)
        def body(r, x, y, acc):
            r.yield_(r.addf(acc, r.mulf(x, y)))
        return self.generic([a, b], [out], [a_map, b_map, [dim(0), dim(1)]],
                            ["parallel", "parallel", "reduction"], body, name="linalg.matmul")

    def elementwise(self, ins, build, shape=None, dtype="f32", batch_dim=None, maps=None):
        shape = shape or self.spec(ins[0])["shape"]
        if batch_dim is None:
            batch_dim = self.spec(ins[0])["batch_dim"]
        rank = len(shape)
        out = self.empty(shape, dtype, batch_dim)
        maps = maps or [identity_map(rank)] * len(ins)
        def body(r, *args):
            r.yield_(build(r, *args[:-1]))
        return self.generic(ins, [out], list(maps) + [identity_map(rank)], ["parallel"] * rank, body)

    def reduce(self, x, keep_dims, combiner, init, out_batch_dim=None, build=None):
        """Reduces all dims of x not in keep_dims with `combiner` (addf, maximumf, ...)."""
        shape = self.spec(x)["shape"]
        rank = len(shape)
        out_shape = [shape[d] for d in keep_dims]
        out = self.fill(init, out_shape, batch_dim=out_batch_dim)
        its = ["parallel" if d in keep_dims else "reduction" for d in range(rank)]
        out_map = [dim(d) for d in keep_dims]
        def body(r, v, acc):
            f = build(r, v) if build else v
            r.yield_(getattr(r, combiner)(f, acc))
        return self.generic([x], [out], [identity_map(rank), out_map], its, body)

    def to_json(self, yields):
        return {"args": self.args, "ops": self.ops, "yields": list(yields)}


class ScheduleBuilder:
    def __init__(self, kind="train", systems=1, global_batch=4, stream_dtype="f32",
                 gradient_dtype="f32", target=None):
        """Values, inputs, streams and kernel results get sram_bytes_per_pe
        (and an empty layout) when given `sram`; None leaves them out."""
        self.kind = kind
        self.systems = systems
        self.global_batch = global_batch
        self.stream_dtype = stream_dtype
        self.gradient_dtype = gradient_dtype
        self.target = dict(target or TARGET)
        self.values = []
        self.params = []
        self.inputs = []
        self.outputs = []
        self.steps = []
        self.vts_section = None

    def value(self, shape, dtype="f32", batch_dim=None, sram=None, ragged=None, mask=0):
        """`ragged`: the dims padded to the valid lengths of VTS mask group
        `mask` (None: dense)."""
        v = {"id": len(self.values), "shape": list(shape), "dtype": dtype, "batch_dim": batch_dim}
        if sram is not None:
            v["sram_bytes_per_pe"] = sram
            v["layout"] = {"dims": [], "x": [], "y": []}
        if ragged is not None:
            v["ragged"] = _ragged(ragged, mask)
        self.values.append(v)
        return v["id"]

    def clone_value(self, v, ragged="same", mask=0):
        """A value like `v`; ragged="same" keeps its ragged dims and mask
        group, else it is ragged along these dims of group `mask`."""
        s = self.values[v]
        if ragged == "same":
            r = s.get("ragged")
            ragged, mask = (r["dims"], r["mask"]) if r else (None, 0)
        return self.value(s["shape"], s["dtype"], s["batch_dim"], ragged=ragged, mask=mask)

    def numel(self, v):
        n = 1
        for d in self.values[v]["shape"]:
            n *= d
        return n

    def param(self, name, shape, optimizer=None):
        """An inference schedule's parameters have no optimizer."""
        p = {"name": name, "shape": list(shape), "dtype": "f32"}
        if optimizer is not None:
            p["optimizer"] = optimizer
        self.params.append(p)

    def input(self, name, shape, dtype="f32", role="input", num_classes=None, sram=0):
        v = self.value(shape, dtype, 0, sram=sram)
        spec = {"name": name, "role": role, "value": v, "dtype": dtype, "shape": list(shape)}
        if num_classes is not None:
            spec["num_classes"] = num_classes
        self.inputs.append(spec)
        return v

    def output(self, name, v, role=None):
        self.outputs.append({"name": name, "role": role or ("loss" if self.kind == "train" else "output"),
                             "value": v})

    def _param(self, name):
        return next(p for p in self.params if p["name"] == name)

    def weight_stream(self, name, order="row_major", dtype=None, sram=0):
        shape = list(self._param(name)["shape"])
        if order == "transposed":
            shape = shape[::-1]
        dtype = dtype or self.stream_dtype
        v = self.value(shape, "f32", None, sram=sram)
        n = 1
        for d in shape:
            n *= d
        self.steps.append({"op": "weight_stream", "param": name, "order": order, "dtype": dtype,
                           "result": v, "bytes": n * DTYPE_BYTES[dtype]})
        return v

    def gradient_stream(self, name, v, order="row_major"):
        self.steps.append({"op": "gradient_stream", "param": name, "operand": v, "order": order,
                           "bytes": self.numel(v) * 4})

    def layout_convert(self, v, cycles=1000, sram=0):
        s = self.values[v]
        r = self.value(s["shape"], s["dtype"], s["batch_dim"], sram=sram)
        self.steps.append({"op": "layout_convert", "operand": v, "result": r, "cycles": cycles})
        return r

    def kernel(self, name, layer, phase, operands, build, cycles=1e4, flops=0.0, sram=0,
               ragged=None, arg_ragged=None):
        """build(body, *args) returns the list of yielded body values.
        ragged: the VTS mask group the kernel runs ragged on (None: dense);
        arg_ragged as for Body. A batch result is ragged like its yield."""
        body = Body(self, operands, arg_ragged)
        yields = build(body, *body.args)
        if not isinstance(yields, (list, tuple)):
            yields = [yields]
        results = []
        for y in yields:
            s = self.values[y]
            r = s.get("ragged") if s["batch_dim"] is not None else None
            results.append(self.value(s["shape"], s["dtype"], s["batch_dim"], sram=sram,
                                      ragged=r["dims"] if r else None,
                                      mask=r["mask"] if r else 0))
        step = {"op": "kernel", "name": name, "layer": layer, "phase": phase,
                "operands": list(operands)}
        if ragged is not None:
            step["ragged"] = ragged
        step.update({"results": results, "cost": {"flops": flops, "cycles": cycles, "pes": 1000},
                     "body": body.to_json(yields)})
        self.steps.append(step)
        return results[0] if len(results) == 1 else results

    # Variable tensor shapes -------------------------------------------------

    def strip_padding(self, v, dims, mask=0, cycles=50):
        """Packs `v`'s samples to their valid lengths along `dims`."""
        r = self.clone_value(v, dims, mask)
        self.steps.append({"op": "strip_padding", "operand": v, "mask": mask, "result": r,
                           "cycles": cycles})
        return r

    def restore_padding(self, v, mask=0, cycles=50):
        """Pads a ragged `v` back to the full shape."""
        r = self.clone_value(v, None)
        self.steps.append({"op": "restore_padding", "operand": v, "mask": mask, "result": r,
                           "cycles": cycles})
        return r

    def vts(self, masks, seq, threshold):
        """The "vts" section: mask groups (their [batch, seq] mask values)
        and the valid fraction at or below which a step runs ragged."""
        self.vts_section = {"threshold": threshold,
                            "masks": [{"value": m, "seq": seq} for m in masks]}

    def to_json(self):
        doc = {
            "format": "wsc-schedule", "version": 1,
            "function": "train_step" if self.kind == "train" else "forward",
            "kind": self.kind, "mode": "weight_streaming", "systems": self.systems,
            "global_batch": self.global_batch, "stream_dtype": self.stream_dtype,
            "gradient_dtype": self.gradient_dtype, "target": self.target,
            "params": self.params, "inputs": self.inputs, "outputs": self.outputs,
            "values": self.values, "steps": self.steps,
            "report": {"note": "hand-made test schedule"},
        }
        if self.vts_section is not None:
            doc["vts"] = self.vts_section
        return doc

    def dumps(self):
        return json.dumps(self.to_json(), separators=(",", ":"))
