"""Regenerates the variable-tensor-shape (VTS) schedules in this directory.

    python3 unittests/Runtime/Inputs/generate_vts.py

Hand-made schedules (no compiler involved), written op by op with
python/tests/schedule_builder.py; the generated JSON is checked in so the
C++ tests need no Python:

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
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "python", "tests"))

import runtime_models as M  # noqa: E402
from schedule_builder import ScheduleBuilder, dim as d  # noqa: E402

SGD = M.sgd(lr=0.5)
PAR3 = ["parallel"] * 3
MATMUL = ["parallel", "parallel", "reduction"]


def builder(kind, batch):
    """A one-system schedule streaming f32. Its inputs, streams and kernel
    results are made with sram=None: they carry no SRAM figures."""
    return ScheduleBuilder("train" if kind == "train" else "inference", 1, batch, "f32")


def streamed(sb, name, shape, optimizer=None):
    sb.param(name, shape, optimizer)
    return sb.weight_stream(name, sram=None)


def kernel(sb, name, layer, phase, operands, build, ragged=0, arg_ragged=None):
    """A kernel running ragged on mask group 0 unless ragged=None."""
    return sb.kernel(name, layer, phase, operands, build, cycles=1000.0, flops=0.0, sram=None,
                     ragged=ragged, arg_ragged=arg_ragged)


def add_mul(r, a, b, c):
    r.yield_(r.addf(c, r.mulf(a, b)))


def mlp():
    B, S, H, O = 4, 6, 5, 3
    sb = builder("train", B)
    x = sb.input("x", [B, S, H], sram=None)
    tgt = sb.input("target", [B, S, O], role="label", sram=None)
    mask = sb.input("mask", [B, S], sram=None)
    w = streamed(sb, "fc.weight", [O, H], SGD)
    bias = streamed(sb, "fc.bias", [O], SGD)
    xr, tr, mr = (sb.strip_padding(v, [1]) for v in (x, tgt, mask))

    # fc.fwd: y = relu(x W^T + b), token-wise on [B*S, H].
    def fwd(k, ax, aw, ab):
        x2 = k.reshape("collapse", ax, [B * S, H], [[0, 1], [2]], 0, [0])
        acc = k.fill(0.0, [B * S, O], batch_dim=0, ragged=[0])
        mm = k.generic([x2, aw], [acc], [[d(0), d(2)], [d(1), d(2)], [d(0), d(1)]], MATMUL,
                       add_mul, name="linalg.matmul")
        z = k.generic([mm, ab], [k.empty_like(mm)], [[d(0), d(1)], [d(1)], [d(0), d(1)]],
                      ["parallel"] * 2,
                      lambda r, a, b, o: r.yield_(r.maximumf(r.addf(a, b), r.const(0.0))))
        return [k.reshape("expand", z, [B, S, O], [[0, 1], [2]], 0, [1])]
    y = kernel(sb, "fc.fwd", "fc", "forward", [xr, w, bias], fwd)

    # loss: sum(mask * (y - t)^2) / (B * S), and dy.
    m3 = [d(0), d(1), d(2)]
    scale = 1.0 / (B * S)

    def loss_body(k, ay, at, am):
        diff = k.generic([ay, at, am], [k.empty_like(ay)], [m3, m3, [d(0), d(1)], m3], PAR3,
                         lambda r, a, b, m, o: r.yield_(r.mulf(r.subf(a, b), m)))
        total = k.fill(0.0, [])
        total = k.generic([diff], [total], [m3, []], ["reduction"] * 3,
                          lambda r, a, o: r.yield_(r.addf(o, r.mulf(a, a))))
        loss = k.generic([total], [k.empty([])], [[], []], [],
                         lambda r, a, o: r.yield_(r.mulf(a, r.const(scale))))
        dy = k.generic([diff], [k.empty_like(ay)], [m3, m3], PAR3,
                       lambda r, a, o: r.yield_(r.mulf(a, r.const(2 * scale))))
        return [loss, dy]
    loss, dy = kernel(sb, "loss", "loss", "loss", [y, tr, mr], loss_body)
    sb.output("loss", loss)

    # fc.bwd: g = dy * relu'(y); dW = g^T x, db = sum g.
    def bwd(k, ady, ay, ax):
        g = k.generic([ady, ay], [k.empty_like(ady)], [m3, m3, m3], PAR3,
                      lambda r, a, b, o: r.yield_(
                          r.select(r.cmpf("ogt", b, r.const(0.0)), a, r.const(0.0))))
        g2 = k.reshape("collapse", g, [B * S, O], [[0, 1], [2]], 0, [0])
        x2 = k.reshape("collapse", ax, [B * S, H], [[0, 1], [2]], 0, [0])
        dw = k.generic([g2, x2], [k.fill(0.0, [O, H])],
                       [[d(2), d(0)], [d(2), d(1)], [d(0), d(1)]], MATMUL, add_mul,
                       name="linalg.matmul")
        db = k.generic([g2], [k.fill(0.0, [O])], [[d(0), d(1)], [d(1)]],
                       ["reduction", "parallel"], lambda r, a, o: r.yield_(r.addf(o, a)))
        return [dw, db]
    dw, db = kernel(sb, "fc.bwd", "fc", "backward", [dy, y, xr], bwd)
    sb.gradient_stream("fc.weight", dw)
    sb.gradient_stream("fc.bias", db)
    sb.vts([mask], S, threshold=0.9)
    return sb


def layer_pipelined(sb):
    """The LP twin of mlp(): every kernel a matmul stage on its layer's
    region; layers read each other's values in place (no routes)."""
    lp = {st["name"]: ("matmul", [1], [1], st["cost"]["cycles"], 8)
          for st in sb.steps if st["op"] == "kernel"}
    return M.layer_pipelined(sb, {"fc": (0, 0, 10, 10), "loss": (20, 0, 4, 4)}, lp,
                             routes=False)


def attention():
    B, S, D = 4, 8, 4
    sb = builder("inference", B)
    q = sb.input("q", [B, S, D], sram=None)
    kk = sb.input("k", [B, S, D], sram=None)
    mask = sb.input("mask", [B, S], "i1", sram=None)
    pos = streamed(sb, "pos", [S + 2, D])
    pe = streamed(sb, "pe", [S, D])
    qr, kr = sb.strip_padding(q, [1]), sb.strip_padding(kk, [1])
    m3 = [d(0), d(1), d(2)]
    m2 = [d(0), d(1)]

    # embed: q + pos[:S] + pe, token-wise. Per sample the slice is
    # pos[:len] and the ragged argument of pe is pe[:len].
    def embed(k, aq, apos, ape):
        sl = k.extract_slice(apos, [0, 0], [S, D], [1, 1], ragged=[0])
        return [k.generic([aq, sl, ape], [k.empty_like(aq)],
                          [m3, [d(1), d(2)], [d(1), d(2)], m3], PAR3,
                          lambda r, a, b, c, o: r.yield_(r.addf(r.addf(a, b), c)))]
    qp = kernel(sb, "embed", "embed", "forward", [qr, pos, pe], embed, arg_ragged={2: [0]})

    # stats: 2 pe (the same for every sample), sum_b q (a partial sum,
    # zero-extended from [len, D] to [S, D]) and sum_i q (a dense batch
    # result, one row per sample).
    def stats(k, aq, ape):
        p2 = k.generic([ape], [k.empty_like(ape)], [m2, m2], ["parallel"] * 2,
                       lambda r, a, o: r.yield_(r.addf(a, a)))
        qsum = k.generic([aq], [k.fill(0.0, [S, D], ragged=[0])], [m3, [d(1), d(2)]],
                         ["reduction", "parallel", "parallel"],
                         lambda r, a, o: r.yield_(r.addf(o, a)))
        pooled = k.generic([aq], [k.fill(0.0, [B, D], batch_dim=0)], [m3, [d(0), d(2)]],
                           ["parallel", "reduction", "parallel"],
                           lambda r, a, o: r.yield_(r.addf(o, a)))
        return [p2, qsum, pooled]
    p2, qsum, pooled = kernel(sb, "stats", "embed", "forward", [qr, pe], stats)

    # scores: q k^T / sqrt(D) + causal, over [B, S, S] (ragged dims 1, 2).
    def scores(k, aq, ak):
        sc = k.fill(0.0, [B, S, S], batch_dim=0, ragged=[1, 2])
        sc = k.generic([aq, ak], [sc], [[d(0), d(1), d(3)], [d(0), d(2), d(3)], m3],
                       PAR3 + ["reduction"], add_mul, name="linalg.batch_matmul")
        causal = k.constant([0.0 if j <= i else "-inf" for i in range(S) for j in range(S)],
                            [S, S], ragged=[0, 1])
        return [k.generic([sc, causal], [k.empty_like(sc)], [m3, [d(1), d(2)], m3], PAR3,
                          lambda r, a, c, o: r.yield_(
                              r.addf(r.mulf(a, r.const(1 / math.sqrt(D))), c)))]
    sc = kernel(sb, "scores", "attn", "forward", [qp, kr], scores)

    # softmax over the keys, then p k.
    def softmax_av(k, asc, ak):
        red = ["parallel", "parallel", "reduction"]
        mx = k.generic([asc], [k.fill("-inf", [B, S], batch_dim=0, ragged=[1])],
                       [m3, [d(0), d(1)]], red, lambda r, a, o: r.yield_(r.maximumf(o, a)))
        ex = k.generic([asc, mx], [k.empty_like(asc)], [m3, [d(0), d(1)], m3], PAR3,
                       lambda r, a, m, o: r.yield_(r.exp(r.subf(a, m))))
        sm = k.generic([ex], [k.fill(0.0, [B, S], batch_dim=0, ragged=[1])],
                       [m3, [d(0), d(1)]], red, lambda r, a, o: r.yield_(r.addf(o, a)))
        p = k.generic([ex, sm], [k.empty_like(asc)], [m3, [d(0), d(1)], m3], PAR3,
                      lambda r, a, s, o: r.yield_(r.divf(a, s)))
        return [k.generic([p, ak], [k.fill_into(0.0, k.empty_like(ak))],
                          [[d(0), d(1), d(3)], [d(0), d(3), d(2)], m3], PAR3 + ["reduction"],
                          add_mul, name="linalg.batch_matmul")]
    o = kernel(sb, "softmax_av", "attn", "forward", [sc, kr], softmax_av)
    out = sb.restore_padding(o)
    for name, v in (("out", out), ("p2", p2), ("qsum", qsum), ("pooled", pooled)):
        sb.output(name, v)
    sb.vts([mask], S, threshold=0.9)
    return sb


def partial():
    B, S, D = 4, 6, 3
    sb = builder("inference", B)
    x = sb.input("x", [B, S, D], sram=None)
    mask = sb.input("mask", [B, S], sram=None)
    xr = sb.strip_padding(x, [1])
    red = ["reduction", "reduction", "parallel"]
    m3 = [d(0), d(1), d(2)]

    def summed(k, ax, square):  # sum over samples and tokens of x (or x^2)
        return k.generic([ax], [k.fill(0.0, [D])], [m3, [d(2)]], red,
                         lambda r, a, o: r.yield_(r.addf(o, r.mulf(a, a) if square else a)))

    def add(k, a, b):
        return k.generic([a, b], [k.empty([D])], [[d(0)], [d(0)], [d(0)]], ["parallel"],
                         lambda r, x, y, o: r.yield_(r.addf(x, y)))

    s1 = kernel(sb, "sum1", "s", "forward", [xr], lambda k, ax: [summed(k, ax, False)])
    # s2 = s1 + sum x^2: s1 counts once, not once per sample.
    s2 = kernel(sb, "sum2", "s", "forward", [xr, s1],
                lambda k, ax, a1: [add(k, a1, summed(k, ax, True))])
    # s3 = 2 s1 on a kernel that is not ragged is a partial sum too.
    s3 = kernel(sb, "double", "s", "forward", [s1],
                lambda k, a: [k.generic([a], [k.empty([D])], [[d(0)], [d(0)]], ["parallel"],
                                        lambda r, v, o: r.yield_(r.addf(v, v)))],
                ragged=None)
    s4 = kernel(sb, "sum3", "s", "forward", [xr, s3],
                lambda k, ax, a3: [add(k, a3, summed(k, ax, False))])

    # ids[b, t, c] = 100 b + t.
    def position(r):
        def at(dim):
            i = r.cast("arith.index_cast", r.index(dim), "i64")
            return r.cast("arith.sitofp", i, "f32")
        return r.addf(r.mulf(at(0), r.const(100.0)), at(1))

    # bids[b, c] = 100 b, from no batch operand: it still differs per sample.
    def ids_body(k, ax):
        return [k.generic([ax], [k.empty_like(ax)], [m3, m3], PAR3,
                          lambda r, a, o: r.yield_(position(r))),
                k.generic([], [k.empty([B, D], batch_dim=0)], [[d(0), d(1)]], ["parallel"] * 2,
                          lambda r, o: r.yield_(r.addf(position(r), r.const(0.0))))]
    ids, bids = kernel(sb, "ids", "s", "forward", [xr], ids_body)
    ids = sb.restore_padding(ids)
    for name, v in (("s1", s1), ("s2", s2), ("s4", s4), ("ids", ids), ("bids", bids)):
        sb.output(name, v)
    sb.vts([mask], S, threshold=0.9)
    return sb


def write(name, doc):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(json.dumps(doc, separators=(",", ":")))
        f.write("\n")


def main():
    sb = mlp()
    write("vts_mlp.json", sb.to_json())
    write("vts_mlp_lp.json", layer_pipelined(sb))
    write("vts_attention.json", attention().to_json())
    write("vts_partial.json", partial().to_json())


if __name__ == "__main__":
    main()
