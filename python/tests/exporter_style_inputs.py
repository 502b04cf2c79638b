"""Inference IR in the printed styles of exporters other than the project's
own, written from seeded torch modules (the references):

- a JAX/StableHLO export: weights as `@main` arguments (Flax order, bias
  before kernel), private helpers reached by `func.call`, `linalg.map`,
  `linalg.broadcast`, `linalg.transpose`, a final reshape;
- a torch-mlir dynamo export whose weights are stripped to splats
  (`dense<1.5>`), transposed by a `linalg.generic` with `#map` aliases;
- an IREE/TF-style convolution (NHWC/HWCF, weights as hex `dense<"0x...">`,
  a pad by SSA constant amounts into a dynamic type cast back, the result
  `linalg.copy`-ed into the output);
- a program with no parameter at all (a softmax);
- a benchmark harness around a torch-mlir TorchScript-path layer: a `@main`
  driver timing it with `rtclock` and printing with `printMemrefF32`,
  `record_timing` calls with `llvm.mlir.global` names inside the model, the
  result copied into an output argument, and Python floats as `f64`
  scalars (a 0-d `tensor<f64>` input of a generic, a captured `f64`);
- torch-mlir's hashed embedding: `torch.div(rounding_mode='floor')` and
  `torch.remainder` as arith.floordivsi / remsi with the sign fix, the
  gathers checked by `cf.assert` as aten.embedding is.

Each builder returns (module, MLIR text, inputs, argument weights): the
weights given as function arguments, by the name wsc gives them
(`arg<N>`), which wsc-run takes from its --weights file.
"""
import numpy as np
import torch
from torch import nn

from torch_mlir_inputs import _identity, _map, _type


def _hex(array):
    return '"0x' + np.ascontiguousarray(array, np.float32).tobytes().hex().upper() + '"'


def _np(t):
    return t.detach().numpy()


class JaxMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense0, self.dense1 = nn.Linear(16, 32), nn.Linear(32, 10)

    def forward(self, x):
        y = self.dense1(torch.relu(self.dense0(x)))
        return y.reshape(x.shape[0], 2, 5)


def jax_mlp():
    """Flax MLP exported with jax.jit(...).lower(...) and StableHLO -> linalg."""
    torch.manual_seed(4)
    model = JaxMlp()
    x = torch.randn(4, 16)
    text = """module @jit_apply attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<32xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<16x32xf32> {mhlo.sharding = "{replicated}"}, %arg2: tensor<10xf32> {mhlo.sharding = "{replicated}"}, %arg3: tensor<32x10xf32> {mhlo.sharding = "{replicated}"}, %arg4: tensor<4x16xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<4x2x5xf32> {jax.result_info = ""}) {
    %0 = call @dense(%arg4, %arg1, %arg0) : (tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
    %1 = call @relu(%0) : (tensor<4x32xf32>) -> tensor<4x32xf32>
    %2 = call @dense_0(%1, %arg3, %arg2) : (tensor<4x32xf32>, tensor<32x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
    %expanded = tensor.expand_shape %2 [[0], [1, 2]] output_shape [4, 2, 5] : tensor<4x10xf32> into tensor<4x2x5xf32>
    return %expanded : tensor<4x2x5xf32>
  }
  func.func private @dense(%arg0: tensor<4x16xf32>, %arg1: tensor<16x32xf32>, %arg2: tensor<32xf32>) -> tensor<4x32xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x32xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x32xf32>) -> tensor<4x32xf32>
    %2 = linalg.matmul ins(%arg0, %arg1 : tensor<4x16xf32>, tensor<16x32xf32>) outs(%1 : tensor<4x32xf32>) -> tensor<4x32xf32>
    %3 = tensor.empty() : tensor<4x32xf32>
    %broadcasted = linalg.broadcast ins(%arg2 : tensor<32xf32>) outs(%3 : tensor<4x32xf32>) dimensions = [0]
    %4 = tensor.empty() : tensor<4x32xf32>
    %mapped = linalg.map { arith.addf } ins(%2, %broadcasted : tensor<4x32xf32>, tensor<4x32xf32>) outs(%4 : tensor<4x32xf32>)
    return %mapped : tensor<4x32xf32>
  }
  func.func private @relu(%arg0: tensor<4x32xf32>) -> tensor<4x32xf32> {
    %cst = arith.constant dense<0.000000e+00> : tensor<f32>
    %0 = tensor.empty() : tensor<4x32xf32>
    %broadcasted = linalg.broadcast ins(%cst : tensor<f32>) outs(%0 : tensor<4x32xf32>) dimensions = [0, 1]
    %1 = tensor.empty() : tensor<4x32xf32>
    %mapped = linalg.map { arith.maximumf } ins(%arg0, %broadcasted : tensor<4x32xf32>, tensor<4x32xf32>) outs(%1 : tensor<4x32xf32>)
    return %mapped : tensor<4x32xf32>
  }
  func.func private @dense_0(%arg0: tensor<4x32xf32>, %arg1: tensor<32x10xf32>, %arg2: tensor<10xf32>) -> tensor<4x10xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<10x32xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<32x10xf32>) outs(%0 : tensor<10x32xf32>) permutation = [1, 0]
    %1 = tensor.empty() : tensor<4x10xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<4x10xf32>) -> tensor<4x10xf32>
    %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %transposed : tensor<4x32xf32>, tensor<10x32xf32>) outs(%2 : tensor<4x10xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %5 = arith.mulf %in, %in_1 : f32
      %6 = arith.addf %out, %5 : f32
      linalg.yield %6 : f32
    } -> tensor<4x10xf32>
    %4 = tensor.empty() : tensor<4x10xf32>
    %broadcasted = linalg.broadcast ins(%arg2 : tensor<10xf32>) outs(%4 : tensor<4x10xf32>) dimensions = [0]
    %mapped = linalg.map { arith.addf } ins(%3, %broadcasted : tensor<4x10xf32>, tensor<4x10xf32>) outs(%4 : tensor<4x10xf32>)
    return %mapped : tensor<4x10xf32>
  }
}
"""
    weights = {"arg0": _np(model.dense0.bias), "arg1": _np(model.dense0.weight.T),
               "arg2": _np(model.dense1.bias), "arg3": _np(model.dense1.weight.T)}
    return model, text, (x,), weights


def splat_mlp():
    """torch-mlir dynamo MLP with its weights stripped to splats (tpp-mlir's
    benchmarks publish models this way): three Linear + ReLU layers."""
    sizes, batch = [(64, 48), (48, 64), (64, 32)], 8
    model = nn.Sequential(*[m for i, o in sizes for m in (nn.Linear(i, o), nn.ReLU())])
    splats = []
    with torch.no_grad():
        for k, layer in enumerate(model[::2]):
            w, b = 0.02 - 0.005 * k, 0.1 * (k - 1)
            layer.weight.fill_(w)
            layer.bias.fill_(b)
            splats.append((w, b))
    x = torch.randn(batch, 64, generator=torch.Generator().manual_seed(5))
    lines = ['module attributes {torch.debug_module_name = "_lambda"} {',
             "  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>",
             f"  func.func @forward(%arg0: {_type([batch, 64])}) -> {_type([batch, 32])} {{",
             "    %cst_z = arith.constant 0.000000e+00 : f32"]
    h = "%arg0"
    for k, ((i, o), (w, b)) in enumerate(zip(sizes, splats)):
        wt, bt, ht = _type([o, i]), _type([o]), _type([batch, o])
        lines += [
            f"    %w{k} = arith.constant dense<{w:.9e}> : {wt}",
            f"    %b{k} = arith.constant dense<{b:.9e}> : {bt}",
            f"    %e{k} = tensor.empty() : {_type([i, o])}",
            f"    %t{k} = linalg.generic {{indexing_maps = [#map, #map1], iterator_types = "
            f'["parallel", "parallel"]}} ins(%w{k} : {wt}) outs(%e{k} : {_type([i, o])}) {{',
            "    ^bb0(%in: f32, %out: f32):",
            "      linalg.yield %in : f32",
            f"    }} -> {_type([i, o])}",
            f"    %a{k} = tensor.empty() : {ht}",
            f"    %f{k} = linalg.fill ins(%cst_z : f32) outs(%a{k} : {ht}) -> {ht}",
            f"    %m{k} = linalg.matmul ins({h}, %t{k} : {_type([batch, i])}, {_type([i, o])}) "
            f"outs(%f{k} : {ht}) -> {ht}",
            f"    %s{k} = linalg.generic {{indexing_maps = [#map2, #map, #map], iterator_types = "
            f'["parallel", "parallel"]}} ins(%b{k}, %m{k} : {bt}, {ht}) outs(%a{k} : {ht}) {{',
            "    ^bb0(%in: f32, %in_1: f32, %out: f32):",
            "      %r = arith.addf %in, %in_1 : f32",
            "      linalg.yield %r : f32",
            f"    }} -> {ht}",
            f"    %y{k} = linalg.generic {{indexing_maps = [#map, #map], iterator_types = "
            f'["parallel", "parallel"]}} ins(%s{k} : {ht}) outs(%a{k} : {ht}) {{',
            "    ^bb0(%in: f32, %out: f32):",
            "      %c = arith.cmpf ugt, %in, %cst_z : f32",
            "      %r = arith.select %c, %in, %cst_z : f32",
            "      linalg.yield %r : f32",
            f"    }} -> {ht}"]
        h = f"%y{k}"
    lines += [f"    return {h} : {_type([batch, 32])}", "  }", "}"]
    maps = ["#map = " + _identity(2), "#map1 = " + _map(2, ["d1", "d0"]),
            "#map2 = " + _map(2, ["d1"])]
    return model, "\n".join(maps + lines) + "\n", (x,), {}


class ConvNet(nn.Module):
    """NHWC in and out, as a TF model: conv 3x3 pad 1, bias, ReLU, dense."""

    def __init__(self):
        super().__init__()
        self.conv, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.Linear(8 * 6 * 6, 10)

    def forward(self, x):
        y = torch.relu(self.conv(x.permute(0, 3, 1, 2))).permute(0, 2, 3, 1)
        return self.fc(y.reshape(x.shape[0], -1))


def iree_conv():
    """A Keras-style CNN as IREE's input pipeline lowers it to linalg."""
    torch.manual_seed(6)
    model = ConvNet()
    x = torch.randn(2, 6, 6, 3)
    hwcf = _np(model.conv.weight.permute(2, 3, 1, 0))
    # The dense layer's rows follow the NHWC flattening of the activations.
    dense = _np(model.fc.weight.T)
    text = f"""#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d1)>
module {{
  func.func @predict(%arg0: tensor<2x6x6x3xf32>) -> tensor<2x10xf32> {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense<{_hex(hwcf)}> : tensor<3x3x3x8xf32>
    %cst_1 = arith.constant dense<{_hex(_np(model.conv.bias))}> : tensor<8xf32>
    %cst_2 = arith.constant dense<{_hex(dense)}> : tensor<288x10xf32>
    %cst_3 = arith.constant dense<{_hex(_np(model.fc.bias))}> : tensor<10xf32>
    %padded = tensor.pad %arg0 low[%c0, %c1, %c1, %c0] high[%c0, %c1, %c1, %c0] {{
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
      tensor.yield %cst : f32
    }} : tensor<2x6x6x3xf32> to tensor<?x?x?x?xf32>
    %cast = tensor.cast %padded : tensor<?x?x?x?xf32> to tensor<2x8x8x3xf32>
    %0 = tensor.empty() : tensor<2x6x6x8xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    %2 = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}} ins(%cast, %cst_0 : tensor<2x8x8x3xf32>, tensor<3x3x3x8xf32>) outs(%1 : tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    %3 = linalg.generic {{indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%2, %cst_1 : tensor<2x6x6x8xf32>, tensor<8xf32>) outs(%0 : tensor<2x6x6x8xf32>) {{
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %9 = arith.addf %in, %in_4 : f32
      %10 = arith.maximumf %9, %cst : f32
      linalg.yield %10 : f32
    }} -> tensor<2x6x6x8xf32>
    %collapsed = tensor.collapse_shape %3 [[0], [1, 2, 3]] : tensor<2x6x6x8xf32> into tensor<2x288xf32>
    %4 = tensor.empty() : tensor<2x10xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<2x10xf32>) -> tensor<2x10xf32>
    %6 = linalg.matmul ins(%collapsed, %cst_2 : tensor<2x288xf32>, tensor<288x10xf32>) outs(%5 : tensor<2x10xf32>) -> tensor<2x10xf32>
    %7 = linalg.generic {{indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel"]}} ins(%6, %cst_3 : tensor<2x10xf32>, tensor<10xf32>) outs(%4 : tensor<2x10xf32>) {{
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %9 = arith.addf %in, %in_4 : f32
      linalg.yield %9 : f32
    }} -> tensor<2x10xf32>
    %8 = tensor.empty() : tensor<2x10xf32>
    %copy = linalg.copy ins(%7 : tensor<2x10xf32>) outs(%8 : tensor<2x10xf32>) -> tensor<2x10xf32>
    return %copy : tensor<2x10xf32>
  }}
}}
"""
    return model, text, (x,), {}


class Softmax(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def no_parameter():
    """A softmax and nothing else: no parameter for any kernel to form on."""
    x = torch.randn(6, 10, generator=torch.Generator().manual_seed(7))
    keep, red = _map(2, ["d0", "0"]), '["parallel", "reduction"]'
    t, k = _type([6, 10]), _type([6, 1])
    text = f"""#map = {_identity(2)}
#map1 = {keep}
module {{
  func.func @forward(%arg0: {t}) -> {t} {{
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.000000e+00 : f32
    %e = tensor.empty() : {k}
    %f = linalg.fill ins(%ninf : f32) outs(%e : {k}) -> {k}
    %max = linalg.generic {{indexing_maps = [#map, #map1], iterator_types = {red}}} ins(%arg0 : {t}) outs(%f : {k}) {{
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %in, %out : f32
      linalg.yield %0 : f32
    }} -> {k}
    %ex = tensor.empty() : {t}
    %exp = linalg.generic {{indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]}} ins(%arg0, %max : {t}, {k}) outs(%ex : {t}) {{
    ^bb0(%in: f32, %m: f32, %out: f32):
      %0 = arith.subf %in, %m : f32
      %1 = math.exp %0 : f32
      linalg.yield %1 : f32
    }} -> {t}
    %z = linalg.fill ins(%zero : f32) outs(%e : {k}) -> {k}
    %sum = linalg.generic {{indexing_maps = [#map, #map1], iterator_types = {red}}} ins(%exp : {t}) outs(%z : {k}) {{
    ^bb0(%in: f32, %out: f32):
      %0 = arith.addf %in, %out : f32
      linalg.yield %0 : f32
    }} -> {k}
    %p = linalg.generic {{indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]}} ins(%exp, %sum : {t}, {k}) outs(%ex : {t}) {{
    ^bb0(%in: f32, %s: f32, %out: f32):
      %0 = arith.divf %in, %s : f32
      linalg.yield %0 : f32
    }} -> {t}
    return %p : {t}
  }}
}}
"""
    return Softmax(), text, (x,), {}


class HashedEmbedding(nn.Module):
    """Ids in [-8 per, 8 per): a row of `hi` by floor division, of `lo` by
    the remainder (both round toward -inf in PyTorch), summed, projected."""

    def __init__(self, per=4, buckets=16, dim=64):
        super().__init__()
        self.per = per
        self.hi, self.lo = nn.Embedding(buckets, dim), nn.Embedding(per, dim)
        self.proj = nn.Linear(dim, 8)

    def forward(self, ids):
        hi = torch.div(ids, self.per, rounding_mode="floor") + self.hi.num_embeddings // 2
        return self.proj(self.hi(hi) + self.lo(torch.remainder(ids, self.per)))


def _gather(table, rows, dim, ids, extra=None):
    """aten.embedding as torch-mlir lowers it: each id checked, then read."""
    out = f"tensor<4x6x{dim}xf32>"
    ins = ids + (f", {extra}" if extra else "")
    types = "tensor<4x6xi64>" + (f", {out}" if extra else "")
    maps = "#map1, #map2" + (", #map2" if extra else "")
    args = "%in: i64" + (", %in_0: f32" if extra else "")
    body = ("      %sum = arith.addf %extracted, %in_0 : f32\n      linalg.yield %sum : f32"
            if extra else "      linalg.yield %extracted : f32")
    return f"""linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel", "parallel", "parallel"]}} ins({ins} : {types}) outs(%e3 : {out}) {{
    ^bb0({args}, %out: f32):
      %i = arith.index_cast %in : i64 to index
      %j = linalg.index 2 : index
      %lt = arith.cmpi slt, %i, %c{rows} : index
      cf.assert %lt, "index must be smaller than dim size"
      %ge = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %ge, "index must be larger or equal to 0"
      %extracted = tensor.extract {table}[%i, %j] : tensor<{rows}x{dim}xf32>
{body}
    }} -> {out}"""


def hashed_embedding():
    """torch-mlir's output for HashedEmbedding: integer division and
    remainder in kernels, the gathers guarded by cf.assert."""
    torch.manual_seed(8)
    model = HashedEmbedding()
    ids = torch.randint(-32, 32, (4, 6), generator=torch.Generator().manual_seed(9))
    hi, lo = _np(model.hi.weight), _np(model.lo.weight)
    text = f"""#map = {_identity(2)}
#map1 = {_map(3, ["d0", "d1"])}
#map2 = {_identity(3)}
#map3 = {_map(2, ["d1"])}
#map4 = {_map(2, ["d1", "d0"])}
module attributes {{torch.debug_module_name = "HashedEmbedding"}} {{
  func.func @forward(%arg0: tensor<4x6xi64>) -> tensor<4x6x8xf32> {{
    %c4_i64 = arith.constant 4 : i64
    %c8_i64 = arith.constant 8 : i64
    %c0_i64 = arith.constant 0 : i64
    %c16 = arith.constant 16 : index
    %c4 = arith.constant 4 : index
    %cst = arith.constant 0.000000e+00 : f32
    %hi = arith.constant dense<{_hex(hi)}> : tensor<16x64xf32>
    %lo = arith.constant dense<{_hex(lo)}> : tensor<4x64xf32>
    %w = arith.constant dense<{_hex(_np(model.proj.weight))}> : tensor<8x64xf32>
    %b = arith.constant dense<{_hex(_np(model.proj.bias))}> : tensor<8xf32>
    %e = tensor.empty() : tensor<4x6xi64>
    %q = linalg.generic {{indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}} ins(%arg0 : tensor<4x6xi64>) outs(%e : tensor<4x6xi64>) {{
    ^bb0(%in: i64, %out: i64):
      %0 = arith.floordivsi %in, %c4_i64 : i64
      %1 = arith.addi %0, %c8_i64 : i64
      linalg.yield %1 : i64
    }} -> tensor<4x6xi64>
    %r = linalg.generic {{indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}} ins(%arg0 : tensor<4x6xi64>) outs(%e : tensor<4x6xi64>) {{
    ^bb0(%in: i64, %out: i64):
      %0 = arith.remsi %in, %c4_i64 : i64
      %1 = arith.cmpi ne, %0, %c0_i64 : i64
      %2 = arith.cmpi slt, %0, %c0_i64 : i64
      %3 = arith.andi %1, %2 : i1
      %4 = arith.addi %0, %c4_i64 : i64
      %5 = arith.select %3, %4, %0 : i64
      linalg.yield %5 : i64
    }} -> tensor<4x6xi64>
    %e3 = tensor.empty() : tensor<4x6x64xf32>
    %g = {_gather("%hi", 16, 64, "%q")}
    %s = {_gather("%lo", 4, 64, "%r", extra="%g")}
    %flat = tensor.collapse_shape %s [[0, 1], [2]] : tensor<4x6x64xf32> into tensor<24x64xf32>
    %et = tensor.empty() : tensor<64x8xf32>
    %wt = linalg.generic {{indexing_maps = [#map, #map4], iterator_types = ["parallel", "parallel"]}} ins(%w : tensor<8x64xf32>) outs(%et : tensor<64x8xf32>) {{
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }} -> tensor<64x8xf32>
    %eo = tensor.empty() : tensor<24x8xf32>
    %f = linalg.fill ins(%cst : f32) outs(%eo : tensor<24x8xf32>) -> tensor<24x8xf32>
    %mm = linalg.matmul ins(%flat, %wt : tensor<24x64xf32>, tensor<64x8xf32>) outs(%f : tensor<24x8xf32>) -> tensor<24x8xf32>
    %y = linalg.generic {{indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel"]}} ins(%mm, %b : tensor<24x8xf32>, tensor<8xf32>) outs(%eo : tensor<24x8xf32>) {{
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.addf %in, %in_0 : f32
      linalg.yield %0 : f32
    }} -> tensor<24x8xf32>
    %out = tensor.expand_shape %y [[0, 1], [2]] output_shape [4, 6, 8] : tensor<24x8xf32> into tensor<4x6x8xf32>
    return %out : tensor<4x6x8xf32>
  }}
}}
"""
    return model, text, (ids,), {}


class ScaledLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 16, bias=False)

    def forward(self, x):
        return torch.relu(self.fc(x) / 8.0 + 1e-5)


def benchmark_harness():
    """What a benchmark file wraps around a model: nothing of it computes
    the result, so wsc drops it; the f64 scalars run as f32, as in PyTorch."""
    torch.manual_seed(9)
    model = ScaledLinear()
    x = torch.randn(4, 64)
    t, w = _type([4, 16]), _type([64, 16])
    text = f"""#map = {_identity(2)}
#map1 = {_map(2, [])}
module {{
  func.func private @rtclock() -> f64
  func.func private @printMemrefF32(tensor<*xf32>)
  func.func private @record_timing(!llvm.ptr)
  llvm.mlir.global internal constant @fc("fc\00") {{addr_space = 0 : i32}}
  func.func @forward(%arg0: {_type([4, 64])}, %output: {t}) -> {t} {{
    %name = llvm.mlir.addressof @fc : !llvm.ptr
    call @record_timing(%name) : (!llvm.ptr) -> ()
    %zero = arith.constant 0.000000e+00 : f32
    %eps = arith.constant 1.000000e-05 : f64
    %scale = arith.constant dense<8.000000e+00> : tensor<f64>
    %weight = arith.constant dense<{_hex(_np(model.fc.weight.T))}> : {w}
    %e = tensor.empty() : {t}
    %f = linalg.fill ins(%zero : f32) outs(%e : {t}) -> {t}
    %mm = linalg.matmul ins(%arg0, %weight : {_type([4, 64])}, {w}) outs(%f : {t}) -> {t}
    %y = linalg.generic {{indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]}} ins(%mm, %scale : {t}, tensor<f64>) outs(%e : {t}) {{
    ^bb0(%in: f32, %s: f64, %out: f32):
      %0 = arith.truncf %s : f64 to f32
      %1 = arith.divf %in, %0 : f32
      %2 = arith.truncf %eps : f64 to f32
      %3 = arith.addf %1, %2 : f32
      %4 = arith.maximumf %3, %zero : f32
      linalg.yield %4 : f32
    }} -> {t}
    call @record_timing(%name) : (!llvm.ptr) -> ()
    %copy = linalg.copy ins(%y : {t}) outs(%output : {t}) -> {t}
    return %copy : {t}
  }}
  func.func @main() {{
    %x = arith.constant dense<1.000000e+00> : {_type([4, 64])}
    %o = arith.constant dense<0.000000e+00> : {t}
    %t0 = call @rtclock() : () -> f64
    %r = call @forward(%x, %o) : ({_type([4, 64])}, {t}) -> {t}
    %t1 = call @rtclock() : () -> f64
    %cast = tensor.cast %r : {t} to tensor<*xf32>
    call @printMemrefF32(%cast) : (tensor<*xf32>) -> ()
    %d = arith.subf %t1, %t0 : f64
    vector.print %d : f64
    return
  }}
}}
"""
    return model, text, (x,), {}


MODELS = {"jax_mlp": jax_mlp, "splat_mlp": splat_mlp, "iree_conv": iree_conv,
          "no_parameter": no_parameter, "hashed_embedding": hashed_embedding,
          "benchmark_harness": benchmark_harness}

if __name__ == "__main__":
    import sys
    print(MODELS[sys.argv[1]]()[1])
