"""Inference IR in the style of torch-mlir's LINALG_ON_TENSORS output, written
from seeded torch modules: no wsc attributes, weights in the IR as
`dense_resource` blobs (the trailing `dialect_resources` section), `dense`
constants and ml_program globals, `cf.assert` shape checks, `linalg.fill`
inits, `tensor.pad` paddings, keepdim reductions with constant output maps.

Each model returns (module, MLIR text, example inputs); run the module in
eval mode on the inputs for the reference.
"""
import math

import numpy as np
import torch
from torch import nn

NEG_INF = "0xFF800000"


def _type(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def _float(x):
    return f"{x:.9e}"


def _map(rank, exprs):
    dims = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({dims}) -> ({', '.join(exprs)})>"


def _identity(rank):
    return _map(rank, [f"d{i}" for i in range(rank)])


class Writer:
    """Builds one `func.func @forward` in torch-mlir's printed form."""

    def __init__(self, name, inputs):
        self.name = name
        self.inputs = inputs
        self.body, self.globals, self.blobs = [], [], {}
        self.shapes = {f"%arg{i}": list(s) for i, s in enumerate(inputs)}
        self.count = 0

    def _value(self, shape):
        name = f"%{self.count}"
        self.count += 1
        self.shapes[name] = list(shape)
        return name

    def _emit(self, text):
        self.body.append("    " + text)

    def _blob(self, array):
        """A resource key in torch-mlir's spelling, made unique like MLIR does."""
        base = "torch_tensor_" + "_".join(map(str, array.shape)) + "_torch.float32"
        key, n = base, 0
        while key in self.blobs:
            n += 1
            key = f"{base}_{n}"
        # The first four bytes are the blob's alignment.
        self.blobs[key] = "0x04000000" + np.ascontiguousarray(array, np.float32).tobytes().hex()
        return key

    # Weights, in the three ways torch-mlir writes them.
    def resource(self, array):
        array = np.asarray(array, np.float32)
        v = self._value(array.shape)
        self._emit(f"{v} = arith.constant dense_resource<{self._blob(array)}> : "
                   f"{_type(array.shape)}")
        return v

    def global_load(self, symbol, array, as_resource=False, const=True):
        array = np.asarray(array, np.float32)
        if as_resource:
            init = f"dense_resource<{self._blob(array)}>"
        else:
            init = f'dense<"0x{np.ascontiguousarray(array, np.float32).tobytes().hex()}">'
        mutable = "" if const else "mutable "
        self.globals.append(f"  ml_program.global private {mutable}@{symbol}({init} : "
                            f"{_type(array.shape)}) : {_type(array.shape)}")
        v = self._value(array.shape)
        op = "global_load_const" if const else "global_load"
        self._emit(f"{v} = ml_program.{op} @{symbol} : {_type(array.shape)}")
        return v

    def scalar(self, text):
        v = f"%cst_{self.count}"
        self.count += 1
        self._emit(f"{v} = arith.constant {text} : f32")
        return v

    def empty(self, shape):
        v = self._value(shape)
        self._emit(f"{v} = tensor.empty() : {_type(shape)}")
        return v

    def fill(self, value, shape):
        cst = self.scalar(value)
        init = self.empty(shape)
        v = self._value(shape)
        self._emit(f"{v} = linalg.fill ins({cst} : f32) outs({init} : {_type(shape)}) -> "
                   f"{_type(shape)}")
        return v

    def check_dims(self, a, da, b, db, what):
        """torch-mlir's shape check: a static compare that folds to true."""
        n = self.count
        self.count += 1
        self._emit(f"%c{da}_{n} = arith.constant {da} : index")
        self._emit(f"%dim_{n} = tensor.dim {a}, %c{da}_{n} : {_type(self.shapes[a])}")
        self._emit(f"%c{db}_{n}b = arith.constant {db} : index")
        self._emit(f"%dim_{n}b = tensor.dim {b}, %c{db}_{n}b : {_type(self.shapes[b])}")
        self._emit(f"%eq_{n} = arith.cmpi eq, %dim_{n}, %dim_{n}b : index")
        self._emit(f'cf.assert %eq_{n}, "{what}"')

    def generic(self, ins, maps, iterators, out_shape, body, init=None):
        """`body` lines use %in0.., %out and define %t0..; the last is yielded.
        `maps` are the inputs' maps, plus the output's for a reduction."""
        init = init or self.empty(out_shape)
        v = self._value(out_shape)
        if "reduction" not in iterators:  # else the caller gave the output map
            maps = maps + [_identity(len(iterators))]
        map_list = ", ".join(maps)
        types = ", ".join(_type(self.shapes[i]) for i in ins)
        iters = ", ".join(f'"{it}"' for it in iterators)
        self._emit(f"{v} = linalg.generic {{indexing_maps = [{map_list}], iterator_types = "
                   f"[{iters}]}} ins({', '.join(ins)} : {types}) outs({init} : "
                   f"{_type(out_shape)}) {{")
        args = ", ".join([f"%in{i}: f32" for i in range(len(ins))] + ["%out: f32"])
        self.body.append(f"    ^bb0({args}):")
        for line in body:
            self._emit("  " + line)
        last = body[-1].split("=")[0].strip()
        self._emit(f"  linalg.yield {last} : f32")
        self._emit(f"}} -> {_type(out_shape)}")
        return v

    def elementwise(self, ins, maps, out_shape, body):
        return self.generic(ins, maps, ["parallel"] * len(out_shape), out_shape, body)

    def named(self, op, ins, out_shape, init, attrs=""):
        v = self._value(out_shape)
        types = ", ".join(_type(self.shapes[i]) for i in ins)
        self._emit(f"{v} = linalg.{op} {attrs}ins({', '.join(ins)} : {types}) outs({init} : "
                   f"{_type(out_shape)}) -> {_type(out_shape)}")
        return v

    def transpose(self, x, perm):
        shape = [self.shapes[x][p] for p in perm]
        init = self.empty(shape)
        v = self._value(shape)
        self._emit(f"{v} = linalg.transpose ins({x} : {_type(self.shapes[x])}) outs({init} : "
                   f"{_type(shape)}) permutation = {list(perm)}")
        return v

    def broadcast(self, x, shape, dims):
        init = self.empty(shape)
        v = self._value(shape)
        self._emit(f"{v} = linalg.broadcast ins({x} : {_type(self.shapes[x])}) outs({init} : "
                   f"{_type(shape)}) dimensions = {list(dims)}")
        return v

    def pad(self, x, low, high, value):
        shape = [d + lo + hi for d, lo, hi in zip(self.shapes[x], low, high)]
        cst = self.scalar(value)
        v = self._value(shape)
        idx = ", ".join(f"%i{k}: index" for k in range(len(shape)))
        self._emit(f"{v} = tensor.pad {x} low{list(low)} high{list(high)} {{")
        self.body.append(f"    ^bb0({idx}):")
        self._emit(f"  tensor.yield {cst} : f32")
        self._emit(f"}} : {_type(self.shapes[x])} to {_type(shape)}")
        return v

    def reshape(self, op, x, groups, shape):
        v = self._value(shape)
        out = f" output_shape {list(shape)}" if op == "expand_shape" else ""
        self._emit(f"{v} = tensor.{op} {x} {groups}{out} : {_type(self.shapes[x])} into "
                   f"{_type(shape)}")
        return v

    def extract_slice(self, x, offsets, sizes):
        v = self._value(sizes)
        ones = [1] * len(sizes)
        self._emit(f"{v} = tensor.extract_slice {x}{list(offsets)} {list(sizes)} {ones} : "
                   f"{_type(self.shapes[x])} to {_type(sizes)}")
        return v

    def insert_slice(self, x, into, offsets):
        v = self._value(self.shapes[into])
        sizes = self.shapes[x]
        self._emit(f"{v} = tensor.insert_slice {x} into {into}{list(offsets)} {list(sizes)} "
                   f"{[1] * len(sizes)} : {_type(sizes)} into {_type(self.shapes[into])}")
        return v

    def text(self, result):
        args = ", ".join(f"%arg{i}: {_type(s)}" for i, s in enumerate(self.inputs))
        out = _type(self.shapes[result])
        lines = [f'module attributes {{torch.debug_module_name = "{self.name}"}} {{']
        lines += self.globals
        lines.append(f"  func.func @forward({args}) -> {out} {{")
        lines += self.body
        lines.append(f"    return {result} : {out}")
        lines += ["  }", "}"]
        if self.blobs:
            entries = ",\n".join(f'      {k}: "{v}"' for k, v in self.blobs.items())
            lines += ["", "{-#", "  dialect_resources: {", "    builtin: {", entries,
                      "    }", "  }", "#-}"]
        return "\n".join(lines) + "\n"


def _numpy(t):
    return t.detach().numpy()


def linear(w, x, weight, bias, weight_as=None):
    """aten.linear on a 2-D input: transpose, zero-filled matmul, bias add."""
    wv = weight_as(_numpy(weight)) if weight_as else w.resource(_numpy(weight))
    wt = w.transpose(wv, [1, 0])
    n, k = w.shapes[x]
    out = [n, w.shapes[wt][1]]
    w.check_dims(x, 1, wt, 0, "mismatching contracting dimension for torch.aten.mm")
    mm = w.named("matmul", [x, wt], out, w.fill("0.000000e+00", out))
    b = w.resource(_numpy(bias))
    return w.elementwise([mm, b], [_identity(2), _map(2, ["d1"])], out,
                         ["%t0 = arith.addf %in0, %in1 : f32"])


def mlp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 32))
    x = torch.randn(4, 16)
    w = Writer("MLP", [x.shape])
    h = linear(w, "%arg0", model[0].weight, model[0].bias)
    # GELU (approximate='none'): 0.5 x (1 + erf(x / sqrt(2))).
    h = w.elementwise([h], [_identity(2)], w.shapes[h], [
        "%t0 = arith.constant 0.70710678118654757 : f32",
        "%t1 = arith.mulf %in0, %t0 : f32",
        "%t2 = math.erf %t1 : f32",
        "%t3 = arith.constant 1.000000e+00 : f32",
        "%t4 = arith.addf %t2, %t3 : f32",
        "%t5 = arith.constant 5.000000e-01 : f32",
        "%t6 = arith.mulf %in0, %t5 : f32",
        "%t7 = arith.mulf %t6, %t4 : f32"])
    out = linear(w, h, model[2].weight, model[2].bias,
                 weight_as=lambda a: w.global_load("fc2_weight", a))
    return model, w.text(out), (x,)


class Attention(nn.Module):
    """GPT-style: fused q/k/v projection, per-head softmax(q k^T / sqrt(d)) v,
    heads concatenated, output projection."""

    def __init__(self, d=32, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        dh = d // self.heads
        outs = []
        for h in range(self.heads):
            sl = slice(h * dh, (h + 1) * dh)
            scores = q[..., sl] @ k[..., sl].transpose(1, 2) / math.sqrt(dh)
            outs.append(torch.softmax(scores, dim=-1) @ v[..., sl])
        return self.proj(torch.cat(outs, dim=-1))


def _softmax(w, x):
    """aten._softmax over the last dim as torch-mlir writes it: keepdim max and
    sum reductions (constant-0 output maps), exp of the difference, divide."""
    b, s, t = w.shapes[x]
    keep = _map(3, ["d0", "d1", "0"])
    red = ["parallel", "parallel", "reduction"]
    mx = w.generic([x], [_identity(3), keep], red, [b, s, 1],
                   ["%t0 = arith.maximumf %in0, %out : f32"],
                   init=w.fill(NEG_INF, [b, s, 1]))
    e = w.elementwise([x, mx], [_identity(3), keep], [b, s, t],
                      ["%t0 = arith.subf %in0, %in1 : f32", "%t1 = math.exp %t0 : f32"])
    total = w.generic([e], [_identity(3), keep], red, [b, s, 1],
                      ["%t0 = arith.addf %in0, %out : f32"],
                      init=w.fill("0.000000e+00", [b, s, 1]))
    return w.elementwise([e, total], [_identity(3), keep], [b, s, t],
                         ["%t0 = arith.divf %in0, %in1 : f32"])


def attention():
    torch.manual_seed(1)
    model = Attention()
    x = torch.randn(2, 8, 32)
    b, s, d = x.shape
    dh = d // model.heads
    w = Writer("Attention", [x.shape])
    # qkv: the 3-D input collapsed to 2-D around a matmul.
    flat = w.reshape("collapse_shape", "%arg0", "[[0, 1], [2]]", [b * s, d])
    qkv = linear(w, flat, model.qkv.weight, model.qkv.bias)
    qkv = w.reshape("expand_shape", qkv, "[[0, 1], [2]]", [b, s, 3 * d])
    cat = w.empty([b, s, d])
    for h in range(model.heads):
        q = w.extract_slice(qkv, [0, 0, h * dh], [b, s, dh])
        k = w.extract_slice(qkv, [0, 0, d + h * dh], [b, s, dh])
        v = w.extract_slice(qkv, [0, 0, 2 * d + h * dh], [b, s, dh])
        kt = w.transpose(k, [0, 2, 1])
        w.check_dims(q, 2, kt, 1, "mismatching contracting dimension")
        scores = w.named("batch_matmul", [q, kt], [b, s, s], w.fill("0.000000e+00", [b, s, s]))
        scale = w.scalar(_float(math.sqrt(dh)))
        scores = w.elementwise([scores], [_identity(3)], [b, s, s],
                               [f"%t0 = arith.divf %in0, {scale} : f32"])
        p = _softmax(w, scores)
        o = w.named("batch_matmul", [p, v], [b, s, dh], w.fill("0.000000e+00", [b, s, dh]))
        cat = w.insert_slice(o, cat, [0, 0, h * dh])
    # proj: aten.matmul of a 3-D input by a 2-D weight broadcast over the batch.
    wp = w.global_load("proj_weight", _numpy(model.proj.weight), as_resource=True, const=False)
    wpt = w.transpose(wp, [1, 0])
    wpb = w.broadcast(wpt, [b, d, d], [0])
    out = w.named("batch_matmul", [cat, wpb], [b, s, d], w.fill("0.000000e+00", [b, s, d]))
    bias = w.resource(_numpy(model.proj.bias))
    out = w.elementwise([out, bias], [_identity(3), _map(3, ["d2"])], [b, s, d],
                        ["%t0 = arith.addf %in0, %in1 : f32"])
    return model, w.text(out), (x,)


class BasicBlock(nn.Module):
    """ResNet basic block (eval-mode BatchNorm) followed by a 3x3/2 max pool."""

    def __init__(self, c=16):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.pool(torch.relu(y + x))


def _batch_norm(w, x, bn):
    """Eval BatchNorm: (x - mean) / sqrt(var + eps) * weight + bias per channel."""
    channel = _map(4, ["d1"])
    stats = [w.resource(_numpy(t)) for t in (bn.running_mean, bn.running_var, bn.weight,
                                             bn.bias)]
    return w.elementwise([x] + stats, [_identity(4)] + [channel] * 4, w.shapes[x], [
        "%t0 = arith.subf %in0, %in1 : f32",
        f"%t1 = arith.constant {_float(bn.eps)} : f32",
        "%t2 = arith.addf %in2, %t1 : f32",
        "%t3 = math.sqrt %t2 : f32",
        "%t4 = arith.divf %t0, %t3 : f32",
        "%t5 = arith.mulf %t4, %in3 : f32",
        "%t6 = arith.addf %t5, %in4 : f32"])


def _relu(w, x):
    rank = len(w.shapes[x])
    return w.elementwise([x], [_identity(rank)], w.shapes[x], [
        "%t0 = arith.constant 0.000000e+00 : f32",
        "%t1 = arith.cmpf ugt, %in0, %t0 : f32",
        "%t2 = arith.select %t1, %in0, %t0 : f32"])


def resnet_block():
    torch.manual_seed(2)
    model = BasicBlock()
    with torch.no_grad():
        for bn in (model.bn1, model.bn2):
            bn.running_mean.normal_(0, 0.1)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.normal_(1, 0.1)
            bn.bias.normal_(0, 0.1)
    x = torch.randn(2, 16, 8, 8)
    n, c, hh, ww = x.shape
    strides = "{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} "
    w = Writer("BasicBlock", [x.shape])
    # conv1: NCHW / FCHW.
    padded = w.pad("%arg0", [0, 0, 1, 1], [0, 0, 1, 1], "0.000000e+00")
    k1 = w.resource(_numpy(model.conv1.weight))
    y = w.named("conv_2d_nchw_fchw", [padded, k1], [n, c, hh, ww],
                w.fill("0.000000e+00", [n, c, hh, ww]), strides)
    y = _relu(w, _batch_norm(w, y, model.bn1))
    # conv2: channels-last, NHWC / HWCF, its weight an ml_program global.
    nhwc = w.transpose(y, [0, 2, 3, 1])
    padded = w.pad(nhwc, [0, 1, 1, 0], [0, 1, 1, 0], "0.000000e+00")
    k2 = w.global_load("conv2_weight", _numpy(model.conv2.weight.permute(2, 3, 1, 0)),
                       as_resource=True)
    y = w.named("conv_2d_nhwc_hwcf", [padded, k2], [n, hh, ww, c],
                w.fill("0.000000e+00", [n, hh, ww, c]), strides)
    y = _batch_norm(w, w.transpose(y, [0, 3, 1, 2]), model.bn2)
    y = w.elementwise([y, "%arg0"], [_identity(4), _identity(4)], [n, c, hh, ww],
                      ["%t0 = arith.addf %in0, %in1 : f32"])
    y = _relu(w, y)
    padded = w.pad(y, [0, 0, 1, 1], [0, 0, 1, 1], NEG_INF)
    window = w.empty([3, 3])
    out_shape = [n, c, hh // 2, ww // 2]
    pool = w.named("pooling_nchw_max", [padded, window], out_shape, w.fill(NEG_INF, out_shape),
                   "{dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ")
    return model, w.text(pool), (x,)


class ConvPools(nn.Module):
    """A strided convolution, then every 2x2/2 pooling variant, summed."""

    def __init__(self, c=16):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, stride=2, bias=False)

    def forward(self, x):
        y = self.conv(x)
        return 2 * nn.functional.max_pool2d(y, 2) + nn.functional.avg_pool2d(y, 2)


def conv_pools():
    torch.manual_seed(3)
    model = ConvPools()
    x = torch.randn(2, 16, 9, 9)
    n, c = x.shape[:2]
    w = Writer("ConvPools", [x.shape])
    k = w.resource(_numpy(model.conv.weight))
    conv = [n, c, 4, 4]
    y = w.named("conv_2d_nchw_fchw", ["%arg0", k], conv, w.fill("0.000000e+00", conv),
                "{dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ")
    attrs = "{dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} "
    window = w.empty([2, 2])
    nchw, nhwc = [n, c, 2, 2], [n, 2, 2, c]
    y_nhwc = w.transpose(y, [0, 2, 3, 1])
    pools = [
        w.named("pooling_nchw_max", [y, window], nchw, w.fill(NEG_INF, nchw), attrs),
        w.named("pooling_nchw_sum", [y, window], nchw, w.fill("0.000000e+00", nchw), attrs),
        w.transpose(w.named("pooling_nhwc_max", [y_nhwc, window], nhwc,
                            w.fill(NEG_INF, nhwc), attrs), [0, 3, 1, 2]),
        w.transpose(w.named("pooling_nhwc_sum", [y_nhwc, window], nhwc,
                            w.fill("0.000000e+00", nhwc), attrs), [0, 3, 1, 2]),
    ]
    # max and sum / 4 from each layout: 2 max + avg overall.
    out = w.elementwise(pools, [_identity(4)] * 4, nchw, [
        "%t0 = arith.addf %in0, %in2 : f32",
        "%t1 = arith.addf %in1, %in3 : f32",
        f"%t2 = arith.constant {_float(0.125)} : f32",
        "%t3 = arith.mulf %t1, %t2 : f32",
        "%t4 = arith.addf %t0, %t3 : f32"])
    return model, w.text(out), (x,)


class AdaptivePool(nn.Module):
    """A convolution, then adaptive average pooling of 5x5 to 3x3: windows
    that overlap and differ in size, as no fixed-stride pool has."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, bias=False)

    def forward(self, x):
        return nn.functional.adaptive_avg_pool2d(self.conv(x), 3)


def _window_bounds(loop):
    """The body lines of a window's rows along output dim `loop` (%o<loop>,
    window loop %k<loop>, constants %size<loop> and %outs<loop>):
    torch-mlir's start = floor(o * size / outs), end = ceil((o + 1) * size
    / outs), the row clamped to start past the end (the gather must stay in
    bounds)."""
    o, k = f"%o{loop}", f"%k{loop}"
    return [
        f"%mul{loop} = arith.muli {o}, %size{loop} : index",
        f"%start{loop} = arith.divsi %mul{loop}, %outs{loop} : index",
        f"%next{loop} = arith.addi {o}, %one : index",
        f"%mulnext{loop} = arith.muli %next{loop}, %size{loop} : index",
        f"%end{loop} = arith.ceildivsi %mulnext{loop}, %outs{loop} : index",
        f"%row{loop} = arith.addi %start{loop}, {k} : index",
        f"%inside{loop} = arith.cmpi slt, %row{loop}, %end{loop} : index",
        f"%at{loop} = arith.select %inside{loop}, %row{loop}, %start{loop} : index",
    ]


def adaptive_pool():
    """torch-mlir's lowering of adaptive_avg_pool2d: a generic over the
    output and a window of the largest size that gathers (tensor.extract)
    from the batched activation by the batch loop's linalg.index and
    computed rows, then a division by each window's size."""
    torch.manual_seed(4)
    model = AdaptivePool()
    x = torch.randn(4, 3, 7, 7)
    n = x.shape[0]
    w = Writer("AdaptivePool", [x.shape])
    conv_shape, out_shape = [n, 4, 5, 5], [n, 4, 3, 3]
    k = w.resource(_numpy(model.conv.weight))
    conv = w.named("conv_2d_nchw_fchw", ["%arg0", k], conv_shape,
                   w.fill("0.000000e+00", conv_shape),
                   "{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ")
    window = w.empty([3, 3])
    sums = w._value(out_shape)
    init = w.fill("0.000000e+00", out_shape)
    ct = _type(conv_shape)
    w._emit(f"{sums} = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> "
            f"(d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], "
            f'iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", '
            f'"reduction"]}} ins({window} : tensor<3x3xf32>) outs({init} : {_type(out_shape)}) {{')
    w.body.append("    ^bb0(%in: f32, %out: f32):")
    lines = ["%one = arith.constant 1 : index", "%zero = arith.constant 0.000000e+00 : f32",
             "%size0 = arith.constant 5 : index", "%outs0 = arith.constant 3 : index",
             "%size1 = arith.constant 5 : index", "%outs1 = arith.constant 3 : index",
             "%n = linalg.index 0 : index", "%c = linalg.index 1 : index",
             "%o0 = linalg.index 2 : index", "%o1 = linalg.index 3 : index",
             "%k0 = linalg.index 4 : index", "%k1 = linalg.index 5 : index"]
    lines += _window_bounds(0) + _window_bounds(1)
    lines += [f"%v = tensor.extract {conv}[%n, %c, %at0, %at1] : {ct}",
              "%inside = arith.andi %inside0, %inside1 : i1",
              "%term = arith.select %inside, %v, %zero : f32",
              "%acc = arith.addf %term, %out : f32"]
    for line in lines:
        w._emit("  " + line)
    w._emit("  linalg.yield %acc : f32")
    w._emit(f"}} -> {_type(out_shape)}")
    # Each window's size, (end - start) per dim, divides its sum.
    divide = ["%one = arith.constant 1 : index", "%size0 = arith.constant 5 : index",
              "%outs0 = arith.constant 3 : index", "%size1 = arith.constant 5 : index",
              "%outs1 = arith.constant 3 : index",
              "%o0 = linalg.index 2 : index", "%o1 = linalg.index 3 : index"]
    for loop in (0, 1):
        divide += _window_bounds(loop)[:5]
        divide.append(f"%len{loop} = arith.subi %end{loop}, %start{loop} : index")
    divide += ["%count = arith.muli %len0, %len1 : index",
               "%count64 = arith.index_cast %count : index to i64",
               "%countf = arith.sitofp %count64 : i64 to f32",
               "%t0 = arith.divf %in0, %countf : f32"]
    out = w.elementwise([sums], [_identity(4)], out_shape, divide)
    return model, w.text(out), (x,)


MODELS = {"mlp": mlp, "attention": attention, "resnet_block": resnet_block,
          "conv_pools": conv_pools, "adaptive_pool": adaptive_pool}

if __name__ == "__main__":
    import sys
    print(MODELS[sys.argv[1]]()[1])
