"""Regenerates the variable-tensor-shape (VTS) schedules in this directory.

    python3 unittests/Runtime/Inputs/generate_vts.py

Hand-made schedules (no compiler involved), written op by op with the small
builder below, which stands alone so the C++ tests need no Python:

- vts_mlp.json: a token-wise layer (collapse [B, S, H] -> [B*S, H], matmul
  with a streamed weight, bias, relu, expand back), a masked MSE loss and
  the backward with its gradient streams; input, target and mask are
  stripped, every kernel runs ragged.
- vts_mlp_lp.json: its layer-pipelined twin (weight_read, weight_update).
- vts_attention.json: inference; q + a [S, D] position table (a non-batch
  operand read per sample as its leading [len, D] block), a kernel with a
  sample-invariant result and a partial sum, causal scores q k^T over
  [B, S, S] with a [S, S] mask constant, softmax over the keys, p k, and
  restore_padding of the result.
- vts_partial.json: inference; partial sums over samples read again: by a
  later ragged kernel (directly, and through a kernel that is not ragged),
  where only the first sample may see them; and positions from linalg.index
  (100 b + t), global whichever system or sample runs them.
"""

import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))

TARGET = {
    "pe_x": 924, "pe_y": 920, "sram_per_pe_bytes": 49152, "clock_hz": 1.0e9,
    "fmac_per_pe_per_cycle": 4, "io_bytes_per_s": 1.0e10,
    "swarmx_fanout": 4, "swarmx_hop_latency_s": 1e-6,
    "memx_capacity_bytes": 4e12, "memx_flops_per_s": 1e12,
    "fabric_bytes_per_cycle": 4,
}

SGD = {"name": "sgd", "lr": 0.5, "momentum": 0.0, "dampening": 0.0,
       "weight_decay": 0.0, "nesterov": False}


def d(i):
    return [[i, 1]]


class Schedule:
    def __init__(self, kind, batch, seq):
        self.kind, self.batch, self.seq = kind, batch, seq
        self.values, self.params, self.inputs, self.outputs, self.steps = [], [], [], [], []

    def value(self, shape, dtype="f32", batch_dim=None, ragged=None):
        v = {"id": len(self.values), "shape": list(shape), "dtype": dtype,
             "batch_dim": batch_dim}
        if ragged is not None:
            v["ragged"] = {"mask": 0, "dims": list(ragged)}
        self.values.append(v)
        return v["id"]

    def like(self, v, ragged="same"):
        src = self.values[v]
        r = src.get("ragged", {}).get("dims") if ragged == "same" else ragged
        return self.value(src["shape"], src["dtype"], src["batch_dim"], r)

    def input(self, name, shape, dtype="f32", role="input"):
        v = self.value(shape, dtype, 0)
        self.inputs.append({"name": name, "role": role, "value": v, "dtype": dtype,
                            "shape": list(shape)})
        return v

    def param(self, name, shape):
        p = {"name": name, "shape": list(shape), "dtype": "f32"}
        if self.kind == "train":
            p["optimizer"] = SGD
        self.params.append(p)
        v = self.value(shape)
        self.steps.append({"op": "weight_stream", "param": name, "order": "row_major",
                           "dtype": "f32", "result": v, "bytes": 4 * math.prod(shape)})
        return v

    def padding(self, op, v, ragged_dims):
        r = self.like(v, ragged=ragged_dims)
        self.steps.append({"op": op, "operand": v, "mask": 0, "result": r, "cycles": 50})
        return r

    def strip(self, v, dims):
        return self.padding("strip_padding", v, dims)

    def restore(self, v):
        return self.padding("restore_padding", v, None)

    def kernel(self, name, layer, phase, operands, arg_ragged=None, ragged=True):
        return Kernel(self, name, layer, phase, operands, arg_ragged or {}, ragged)

    def document(self, masks, threshold):
        return {"format": "wsc-schedule", "version": 1, "function": "step",
                "kind": self.kind, "mode": "weight_streaming", "systems": 1,
                "global_batch": self.batch, "stream_dtype": "f32", "gradient_dtype": "f32",
                "target": TARGET, "params": self.params, "inputs": self.inputs,
                "outputs": self.outputs, "values": self.values, "steps": self.steps,
                "vts": {"threshold": threshold,
                        "masks": [{"value": m, "seq": self.seq} for m in masks]},
                "report": {"note": "hand-made VTS test schedule (generate_vts.py)"}}


class Kernel:
    def __init__(self, sb, name, layer, phase, operands, arg_ragged, ragged):
        self.sb, self.ops = sb, []
        self.step = {"op": "kernel", "name": name, "layer": layer, "phase": phase,
                     "operands": list(operands)}
        if ragged:
            self.step["ragged"] = 0
        # Body arguments: like their operands; a non-batch operand's argument
        # may list ragged dims (each sample reads its leading block).
        self.args = [sb.like(o, ragged=arg_ragged.get(i, "same"))
                     for i, o in enumerate(operands)]

    def empty(self, like, ragged="same"):
        r = self.sb.like(like, ragged)
        self.ops.append({"op": "tensor.empty", "operands": [], "results": [r]})
        return r

    def new(self, shape, batch_dim=None, ragged=None, dtype="f32"):
        r = self.sb.value(shape, dtype, batch_dim, ragged)
        self.ops.append({"op": "tensor.empty", "operands": [], "results": [r]})
        return r

    def constant(self, values, shape, ragged=None):
        r = self.sb.value(shape, "f32", None, ragged)
        self.ops.append({"op": "arith.constant", "operands": [], "results": [r],
                         "value": values})
        return r

    def reshape(self, kind, x, shape, reassociation, batch_dim, ragged):
        r = self.sb.value(shape, self.sb.values[x]["dtype"], batch_dim, ragged)
        self.ops.append({"op": "tensor." + kind + "_shape", "operands": [x], "results": [r],
                         "reassociation": reassociation})
        return r

    def linalg(self, name, ins, out, iterators, maps, body):
        """`body(region, *arg_ids)` returns the yielded region value."""
        operands = list(ins) + [out]
        reg = Region(self.sb, [self.sb.values[o]["dtype"] for o in operands])
        y = body(reg, *reg.args)
        r = self.sb.like(out)
        self.ops.append({"op": "linalg", "name": name, "operands": operands,
                         "num_inputs": len(ins), "results": [r], "iterators": iterators,
                         "maps": maps,
                         "region": {"args": reg.args, "ops": reg.ops, "yields": [y]}})
        return r

    def fill(self, out, value):
        rank = len(self.sb.values[out]["shape"])
        return self.linalg("linalg.fill", [], out, ["parallel"] * rank,
                           [[d(i) for i in range(rank)]], lambda r, o: r.const(value))

    def finish(self, yields, cycles=1000.0):
        """Kernel results: like the yields, but a non-batch result is dense."""
        results = []
        for y in yields:
            v = self.sb.values[y]
            results.append(self.sb.like(y, ragged="same" if v["batch_dim"] is not None else None))
        self.step.update({"results": results,
                          "cost": {"flops": 0.0, "cycles": cycles, "pes": 1000},
                          "body": {"args": self.args, "ops": self.ops, "yields": list(yields)}})
        self.sb.steps.append(self.step)
        return results


class Region:
    def __init__(self, sb, dtypes):
        self.sb, self.ops = sb, []
        self.args = [sb.value([], t) for t in dtypes]

    def op(self, name, operands, dtype="f32", **fields):
        r = self.sb.value([], dtype)
        o = {"op": name, "operands": list(operands), "results": [r]}
        o.update(fields)
        self.ops.append(o)
        return r

    def const(self, value, dtype="f32"):
        return self.op("arith.constant", [], dtype, value=value)

    def __getattr__(self, name):  # r.addf(a, b), r.exp(a), ...
        prefix = "math." if name in ("exp",) else "arith."
        return lambda *args: self.op(prefix + name, args)


def mlp():
    B, S, H, O = 4, 6, 5, 3
    sb = Schedule("train", B, S)
    x = sb.input("x", [B, S, H])
    tgt = sb.input("target", [B, S, O], role="label")
    mask = sb.input("mask", [B, S])
    w = sb.param("fc.weight", [O, H])
    bias = sb.param("fc.bias", [O])
    xr, tr, mr = sb.strip(x, [1]), sb.strip(tgt, [1]), sb.strip(mask, [1])

    # fc.fwd: y = relu(x W^T + b), token-wise on [B*S, H].
    k = sb.kernel("fc.fwd", "fc", "forward", [xr, w, bias])
    ax, aw, ab = k.args
    x2 = k.reshape("collapse", ax, [B * S, H], [[0, 1], [2]], 0, [0])
    acc = k.fill(k.new([B * S, O], 0, [0]), 0.0)
    mm = k.linalg("linalg.matmul", [x2, aw], acc, ["parallel", "parallel", "reduction"],
                  [[d(0), d(2)], [d(1), d(2)], [d(0), d(1)]],
                  lambda r, a, b, c: r.addf(c, r.mulf(a, b)))
    z = k.linalg("linalg.generic", [mm, ab], k.empty(mm), ["parallel", "parallel"],
                 [[d(0), d(1)], [d(1)], [d(0), d(1)]],
                 lambda r, a, b, o: r.maximumf(r.addf(a, b), r.const(0.0)))
    (y,) = k.finish([k.reshape("expand", z, [B, S, O], [[0, 1], [2]], 0, [1])])

    # loss: sum(mask * (y - t)^2) / (B * S), and dy.
    k = sb.kernel("loss", "loss", "loss", [y, tr, mr])
    ay, at, am = k.args
    m3 = [d(0), d(1), d(2)]
    diff = k.linalg("linalg.generic", [ay, at, am], k.empty(ay), ["parallel"] * 3,
                    [m3, m3, [d(0), d(1)], m3],
                    lambda r, a, b, m, o: r.mulf(r.subf(a, b), m))
    total = k.fill(k.new([]), 0.0)
    total = k.linalg("linalg.generic", [diff], total, ["reduction"] * 3, [m3, []],
                     lambda r, a, o: r.addf(o, r.mulf(a, a)))
    scale = 1.0 / (B * S)
    loss = k.linalg("linalg.generic", [total], k.new([]), [], [[], []],
                    lambda r, a, o: r.mulf(a, r.const(scale)))
    dy = k.linalg("linalg.generic", [diff], k.empty(ay), ["parallel"] * 3, [m3, m3],
                  lambda r, a, o: r.mulf(a, r.const(2 * scale)))
    loss, dy = k.finish([loss, dy])
    sb.outputs.append({"name": "loss", "role": "loss", "value": loss})

    # fc.bwd: g = dy * relu'(y); dW = g^T x, db = sum g.
    k = sb.kernel("fc.bwd", "fc", "backward", [dy, y, xr])
    ady, ay, ax = k.args
    g = k.linalg("linalg.generic", [ady, ay], k.empty(ady), ["parallel"] * 3, [m3, m3, m3],
                 lambda r, a, b, o: r.select(r.op("arith.cmpf", [b, r.const(0.0)], "i1",
                                                  predicate="ogt"), a, r.const(0.0)))
    g2 = k.reshape("collapse", g, [B * S, O], [[0, 1], [2]], 0, [0])
    x2 = k.reshape("collapse", ax, [B * S, H], [[0, 1], [2]], 0, [0])
    dw = k.linalg("linalg.matmul", [g2, x2], k.fill(k.new([O, H]), 0.0),
                  ["parallel", "parallel", "reduction"],
                  [[d(2), d(0)], [d(2), d(1)], [d(0), d(1)]],
                  lambda r, a, b, c: r.addf(c, r.mulf(a, b)))
    db = k.linalg("linalg.generic", [g2], k.fill(k.new([O]), 0.0), ["reduction", "parallel"],
                  [[d(0), d(1)], [d(1)]], lambda r, a, o: r.addf(o, a))
    dw, db = k.finish([dw, db])
    for name, v, n in (("fc.weight", dw, O * H), ("fc.bias", db, O)):
        sb.steps.append({"op": "gradient_stream", "param": name, "operand": v,
                         "order": "row_major", "bytes": 4 * n})
    return sb.document([mask], threshold=0.9)


def layer_pipelined(doc):
    """The LP twin of a weight-streaming training schedule."""
    lp = json.loads(json.dumps(doc))
    lp["mode"] = "layer_pipelined"
    regions = {"fc": (0, 0, 10, 10), "loss": (20, 0, 4, 4)}
    steps = []
    for st in json.loads(json.dumps(doc))["steps"]:
        if st["op"] == "weight_stream":
            steps.append({"op": "weight_read", "param": st["param"], "result": st["result"]})
        elif st["op"] == "gradient_stream":
            steps.append({"op": "weight_update", "param": st["param"], "operand": st["operand"]})
        else:
            if st["op"] == "kernel":
                x, y, w, h = regions[st["layer"]]
                st["region"] = {"x": x, "y": y, "width": w, "height": h}
                st["lp"] = {"kind": "matmul", "formal": [1], "exec": [1],
                            "cycles_per_sample": st["cost"]["cycles"], "memory_words": 8}
            steps.append(st)
    lp["steps"] = steps
    return lp


def attention():
    B, S, D = 4, 8, 4
    sb = Schedule("inference", B, S)
    q = sb.input("q", [B, S, D])
    kk = sb.input("k", [B, S, D])
    mask = sb.input("mask", [B, S], "i1")
    pos = sb.param("pos", [S + 2, D])
    pe = sb.param("pe", [S, D])
    qr, kr = sb.strip(q, [1]), sb.strip(kk, [1])
    m3 = [d(0), d(1), d(2)]
    m2 = [d(0), d(1)]

    # embed: q + pos[:S] + pe, token-wise. Per sample the slice is
    # pos[:len] and the ragged argument of pe is pe[:len].
    k = sb.kernel("embed", "embed", "forward", [qr, pos, pe], arg_ragged={2: [0]})
    aq, apos, ape = k.args
    sl = sb.value([S, D], "f32", None, [0])
    k.ops.append({"op": "tensor.extract_slice", "operands": [apos], "results": [sl],
                  "offsets": [0, 0], "sizes": [S, D], "strides": [1, 1]})
    (qp,) = k.finish([k.linalg("linalg.generic", [aq, sl, ape], k.empty(aq), ["parallel"] * 3,
                               [m3, [d(1), d(2)], [d(1), d(2)], m3],
                               lambda r, a, b, c, o: r.addf(r.addf(a, b), c))])

    # stats: 2 pe (the same for every sample), sum_b q (a partial sum,
    # zero-extended from [len, D] to [S, D]) and sum_i q (a dense batch
    # result, one row per sample).
    k = sb.kernel("stats", "embed", "forward", [qr, pe])
    aq, ape = k.args
    p2 = k.linalg("linalg.generic", [ape], k.empty(ape), ["parallel"] * 2, [m2, m2],
                  lambda r, a, o: r.addf(a, a))
    qsum = k.linalg("linalg.generic", [aq], k.fill(k.new([S, D], None, [0]), 0.0),
                    ["reduction", "parallel", "parallel"], [m3, [d(1), d(2)]],
                    lambda r, a, o: r.addf(o, a))
    pooled = k.linalg("linalg.generic", [aq], k.fill(k.new([B, D], 0), 0.0),
                      ["parallel", "reduction", "parallel"], [m3, [d(0), d(2)]],
                      lambda r, a, o: r.addf(o, a))
    p2, qsum, pooled = k.finish([p2, qsum, pooled])

    # scores: q k^T / sqrt(D) + causal, over [B, S, S] (ragged dims 1, 2).
    k = sb.kernel("scores", "attn", "forward", [qp, kr])
    aq, ak = k.args
    sc = k.fill(k.new([B, S, S], 0, [1, 2]), 0.0)
    sc = k.linalg("linalg.batch_matmul", [aq, ak], sc, ["parallel"] * 3 + ["reduction"],
                  [[d(0), d(1), d(3)], [d(0), d(2), d(3)], m3],
                  lambda r, a, b, c: r.addf(c, r.mulf(a, b)))
    causal = k.constant([0.0 if j <= i else "-inf" for i in range(S) for j in range(S)],
                        [S, S], [0, 1])
    masked = k.linalg("linalg.generic", [sc, causal], k.empty(sc), ["parallel"] * 3,
                      [m3, [d(1), d(2)], m3],
                      lambda r, a, c, o: r.addf(r.mulf(a, r.const(1 / math.sqrt(D))), c))
    (scores,) = k.finish([masked])

    # softmax over the keys, then p k.
    k = sb.kernel("softmax_av", "attn", "forward", [scores, kr])
    asc, ak = k.args
    red = ["parallel", "parallel", "reduction"]
    mx = k.linalg("linalg.generic", [asc], k.fill(k.new([B, S], 0, [1]), "-inf"), red,
                  [m3, [d(0), d(1)]], lambda r, a, o: r.maximumf(o, a))
    ex = k.linalg("linalg.generic", [asc, mx], k.empty(asc), ["parallel"] * 3,
                  [m3, [d(0), d(1)], m3], lambda r, a, m, o: r.exp(r.subf(a, m)))
    sm = k.linalg("linalg.generic", [ex], k.fill(k.new([B, S], 0, [1]), 0.0), red,
                  [m3, [d(0), d(1)]], lambda r, a, o: r.addf(o, a))
    p = k.linalg("linalg.generic", [ex, sm], k.empty(asc), ["parallel"] * 3,
                 [m3, [d(0), d(1)], m3], lambda r, a, s, o: r.divf(a, s))
    o = k.linalg("linalg.batch_matmul", [p, ak], k.fill(k.empty(ak), 0.0),
                 ["parallel"] * 3 + ["reduction"], [[d(0), d(1), d(3)], [d(0), d(3), d(2)], m3],
                 lambda r, a, b, c: r.addf(c, r.mulf(a, b)))
    (o,) = k.finish([o])
    out = sb.restore(o)
    sb.outputs += [{"name": "out", "role": "output", "value": out},
                   {"name": "p2", "role": "output", "value": p2},
                   {"name": "qsum", "role": "output", "value": qsum},
                   {"name": "pooled", "role": "output", "value": pooled}]
    return sb.document([mask], threshold=0.9)


def partial():
    B, S, D = 4, 6, 3
    sb = Schedule("inference", B, S)
    x = sb.input("x", [B, S, D])
    mask = sb.input("mask", [B, S])
    xr = sb.strip(x, [1])
    red = ["reduction", "reduction", "parallel"]
    m3 = [d(0), d(1), d(2)]

    def summed(k, ax, square):  # sum over samples and tokens of x (or x^2)
        return k.linalg("linalg.generic", [ax], k.fill(k.new([D]), 0.0), red, [m3, [d(2)]],
                        lambda r, a, o: r.addf(o, r.mulf(a, a) if square else a))

    k = sb.kernel("sum1", "s", "forward", [xr])
    (s1,) = k.finish([summed(k, k.args[0], False)])
    # s2 = s1 + sum x^2: s1 counts once, not once per sample.
    k = sb.kernel("sum2", "s", "forward", [xr, s1])
    ax, a1 = k.args
    s2 = k.linalg("linalg.generic", [a1, summed(k, ax, True)], k.new([D]), ["parallel"],
                  [[d(0)], [d(0)], [d(0)]], lambda r, a, b, o: r.addf(a, b))
    (s2,) = k.finish([s2])
    # s3 = 2 s1 on a kernel that is not ragged is a partial sum too.
    k = sb.kernel("double", "s", "forward", [s1], ragged=False)
    (s3,) = k.finish([k.linalg("linalg.generic", [k.args[0]], k.new([D]), ["parallel"],
                               [[d(0)], [d(0)]], lambda r, a, o: r.addf(a, a))])
    k = sb.kernel("sum3", "s", "forward", [xr, s3])
    ax, a3 = k.args
    s4 = k.linalg("linalg.generic", [a3, summed(k, ax, False)], k.new([D]), ["parallel"],
                  [[d(0)], [d(0)], [d(0)]], lambda r, a, b, o: r.addf(a, b))
    (s4,) = k.finish([s4])
    # ids[b, t, c] = 100 b + t.
    k = sb.kernel("ids", "s", "forward", [xr])

    def position(r, a, o):
        def at(dim):
            i = r.op("arith.index_cast", [r.op("linalg.index", [], "index", dim=dim)], "i64")
            return r.op("arith.sitofp", [i], "f32")
        return r.addf(r.mulf(at(0), r.const(100.0)), at(1))
    # bids[b, c] = 100 b, from no batch operand: it still differs per sample.
    ids, bids = k.finish([
        k.linalg("linalg.generic", [k.args[0]], k.empty(k.args[0]), ["parallel"] * 3,
                 [m3, m3], position),
        k.linalg("linalg.generic", [], k.new([B, D], 0), ["parallel"] * 2, [[d(0), d(1)]],
                 lambda r, o: r.addf(position(r, None, o), r.const(0.0)))])
    ids = sb.restore(ids)
    sb.outputs += [{"name": n, "role": "output", "value": v}
                   for n, v in (("s1", s1), ("s2", s2), ("s4", s4), ("ids", ids),
                                ("bids", bids))]
    return sb.document([mask], threshold=0.9)


def write(name, doc):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(json.dumps(doc, separators=(",", ":")))
        f.write("\n")


def main():
    doc = mlp()
    write("vts_mlp.json", doc)
    write("vts_mlp_lp.json", layer_pipelined(doc))
    write("vts_attention.json", attention())
    write("vts_partial.json", partial())


if __name__ == "__main__":
    main()
