// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-form-kernels | FileCheck %s
// RUN: wsc-opt %s --wsc-form-kernels -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=SPLIT

// A two-layer MLP with MSE: forward kernels per layer with their epilogues,
// a loss kernel fed by the labels, backward kernels in reverse layer order.
// Weight transposes are rematerialised inside each kernel, never passed.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[W0:.*]]: tensor<3x4xf32> {wsc.param = "0.weight"}, %[[W2:.*]]: tensor<2x3xf32> {wsc.param = "2.weight"}, %[[X:.*]]: tensor<8x4xf32> {wsc.input = 0 : i64}, %[[Y:.*]]: tensor<8x2xf32> {wsc.label = 0 : i64})
// CHECK: %[[H:.*]] = wsc.kernel "0.fwd" layer("0") phase(<forward>) (%[[X]], %[[W0]])
// CHECK:   linalg.transpose
// CHECK:   linalg.matmul
// CHECK:   arith.cmpf ugt
// CHECK:   wsc.yield
// CHECK: %[[O:.*]] = wsc.kernel "2.fwd" layer("2") phase(<forward>) (%[[H]], %[[W2]])
// CHECK: %[[L:.*]]:3 = wsc.kernel "loss" layer("loss") phase(<loss>) (%[[O]], %[[Y]])
// CHECK: %[[B2:.*]]:2 = wsc.kernel "2.bwd" layer("2") phase(<backward>)
// CHECK: %[[B0:.*]] = wsc.kernel "0.bwd" layer("0") phase(<backward>)
// CHECK: return %[[L]]#0, %[[B0]], %[[B2]]#{{[0-9]}}
// CHECK-NOT: linalg.

// -----

// Kernel formation is idempotent: a function that has kernels is left alone.
// SPLIT-LABEL: func.func @already_formed
func.func @already_formed(%x: tensor<2x2xf32> {wsc.input = 0 : i64}) -> (tensor<2x2xf32> {wsc.output = 0 : i64}) {
  // SPLIT: wsc.kernel "k"
  %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>):
    wsc.yield %a : tensor<2x2xf32>
  }
  return %0 : tensor<2x2xf32>
}

// -----

// Inference: every op is a forward op; the producer rule fuses the
// elementwise op into the layer of the contraction.
// SPLIT-LABEL: func.func @forward
func.func @forward(%w: tensor<3x4xf32> {wsc.param = "fc.weight"}, %x: tensor<2x4xf32> {wsc.input = 0 : i64}) -> (tensor<2x3xf32> {wsc.output = 0 : i64}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %t = linalg.transpose ins(%w : tensor<3x4xf32>) outs(%e : tensor<4x3xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<2x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = linalg.matmul ins(%x, %t : tensor<2x4xf32>, tensor<4x3xf32>) outs(%f : tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<2x3xf32>) outs(%o : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = math.tanh %in : f32
    linalg.yield %c : f32
  } -> tensor<2x3xf32>
  // SPLIT: %[[K:.*]] = wsc.kernel "fc.fwd" layer("fc") phase(<forward>)
  // SPLIT: math.tanh
  // SPLIT: return %[[K]]
  return %r : tensor<2x3xf32>
}

// -----

// A gradient that does not depend on the batch (an unused parameter).
// expected-error @+1 {{gradient of 'unused.weight' does not depend on the batch}}
func.func @unused(%w: tensor<2xf32> {wsc.param = "unused.weight"}, %x: tensor<2x2xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<2xf32> {wsc.grad = "unused.weight"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %l = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %g0 = tensor.empty() : tensor<2xf32>
  %g = linalg.fill ins(%zero : f32) outs(%g0 : tensor<2xf32>) -> tensor<2xf32>
  return %l, %g : tensor<f32>, tensor<2xf32>
}

// -----

// Side effects are outside the pure tensor programs wsc compiles.
func.func @effects(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
  // expected-error @+1 {{has side effects}}
  %m = memref.alloc() : memref<2xf32>
  return %x : tensor<2xf32>
}

// -----

// A program with no parameter at all: every op joins the stateless kernel.
// SPLIT-LABEL: func.func @no_layer
// SPLIT: %[[K:.*]] = wsc.kernel "stateless.fwd" layer("stateless") phase(<forward>) (%{{.*}})
// SPLIT: arith.negf
// SPLIT: tensor.collapse_shape
// SPLIT: return %[[K]]
func.func @no_layer(%x: tensor<2x2xf32> {wsc.input = 0 : i64}) -> (tensor<4xf32> {wsc.output = 0 : i64}) {
  %e = tensor.empty() : tensor<2x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<2x2xf32>
  %c = tensor.collapse_shape %r [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// Next to a layer: a trailing ReLU fuses with it (epilogue); a copy of the
// input into a result, a standalone collapse_shape of the input and a
// returned constant reach no kernel and form the stateless kernel; a
// returned weight transpose is computed in its weight's kernel.
// SPLIT-LABEL: func.func @beside_a_layer
// SPLIT: %[[FC:.*]]:2 = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%{{.*}}, %{{.*}})
// SPLIT:   linalg.matmul
// SPLIT:   arith.maximumf
// SPLIT:   linalg.transpose
// SPLIT: %[[S:.*]]:3 = wsc.kernel "stateless.fwd" layer("stateless") phase(<forward>) (%{{.*}})
// SPLIT:   linalg.copy
// SPLIT:   tensor.collapse_shape
// SPLIT:   arith.constant dense<{{.*}}> : tensor<3xf32>
// SPLIT: return %[[FC]]#0, %[[S]]#0, %[[S]]#1, %[[S]]#2, %[[FC]]#1
func.func @beside_a_layer(%w: tensor<2x2xf32> {wsc.param = "fc.weight"}, %x: tensor<2x2xf32> {wsc.input = 0 : i64})
    -> (tensor<2x2xf32> {wsc.output = 0 : i64}, tensor<2x2xf32> {wsc.output = 1 : i64}, tensor<4xf32> {wsc.output = 2 : i64}, tensor<3xf32> {wsc.output = 3 : i64}, tensor<2x2xf32> {wsc.output = 4 : i64}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %relu = linalg.map { arith.maximumf } ins(%y, %f : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>)
  %copy = linalg.copy ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %wt = linalg.transpose ins(%w : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) permutation = [1, 0]
  return %relu, %copy, %flat, %c, %wt : tensor<2x2xf32>, tensor<2x2xf32>, tensor<4xf32>, tensor<3xf32>, tensor<2x2xf32>
}

// -----

// Two parameters of layer "a" used before and after layer "b": fusing by
// layer would make a and b depend on each other, so "a.fwd" is split and its
// second part runs after "b.fwd" (a tied embedding and LM head do this).
// SPLIT-LABEL: func.func @cycle
// SPLIT: %[[A:.*]] = wsc.kernel "a.fwd" layer("a") phase(<forward>)
// SPLIT: %[[B:.*]] = wsc.kernel "b.fwd" layer("b") phase(<forward>) (%[[A]]
// SPLIT: %[[A1:.*]] = wsc.kernel "a.fwd.1" layer("a") phase(<forward>) (%[[B]]
// SPLIT: return %[[A1]]
func.func @cycle(%w1: tensor<2x2xf32> {wsc.param = "a.w1"}, %wb: tensor<2x2xf32> {wsc.param = "b.w"}, %w2: tensor<2x2xf32> {wsc.param = "a.w2"}, %x: tensor<2x2xf32> {wsc.input = 0 : i64}) -> (tensor<2x2xf32> {wsc.output = 0 : i64}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %o = linalg.matmul ins(%h, %wb : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = linalg.matmul ins(%o, %w2 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// An embedding gathers from its table inside the body (tensor.extract): the
// table is captured, not an operand, and still makes the op its layer's.
// SPLIT-LABEL: func.func @gather
// SPLIT: wsc.kernel "emb.fwd" layer("emb") phase(<forward>) (%{{.*}}, %{{.*}}) : (tensor<10x4xf32>, tensor<2x3xi64>)
// SPLIT: tensor.extract
func.func @gather(%table: tensor<10x4xf32> {wsc.param = "emb.weight"}, %ids: tensor<2x3xi64> {wsc.input = 0 : i64}) -> (tensor<2x3x4xf32> {wsc.output = 0 : i64}) {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x3xi64>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%id: i64, %out: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<10x4xf32>
    linalg.yield %v : f32
  } -> tensor<2x3x4xf32>
  return %g : tensor<2x3x4xf32>
}

// -----

// Buffers live in MemoryX like parameters: ops reading one join its layer,
// and a buffer's update runs in a kernel even when it reads only buffers
// (num_batches_tracked + 1). An all-reduce is a step of its own: the kernel
// around it splits, and the sum it needs (a statistic of the input, with no
// producer kernel) runs in the part before it.
// SPLIT-LABEL: func.func @buffers
// SPLIT: %[[A:.*]]:2 = wsc.kernel "bn.fwd" layer("bn") phase(<forward>) (%arg3, %arg2)
// SPLIT: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// SPLIT: arith.addi
// SPLIT: %[[T:.*]] = wsc.swarmx.all_reduce %[[A]]#0 : tensor<2xf32>
// SPLIT: %[[B:.*]]:2 = wsc.kernel "bn.fwd.1" layer("bn") phase(<forward>) (%arg3, %[[T]], %arg0, %arg1)
// SPLIT: return %[[B]]#0, %[[B]]#1, %[[A]]#1
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>
#s = affine_map<() -> ()>
func.func @buffers(%w: tensor<2xf32> {wsc.param = "bn.weight"}, %m: tensor<2xf32> {wsc.buffer = "bn.running_mean"}, %n: tensor<i64> {wsc.buffer = "bn.num_batches_tracked"}, %x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}, tensor<2xf32> {wsc.buffer_update = "bn.running_mean"}, tensor<i64> {wsc.buffer_update = "bn.num_batches_tracked"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %total = wsc.swarmx.all_reduce %sum : tensor<2xf32>
  %o = tensor.empty() : tensor<4x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %total, %w : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) outs(%o : tensor<4x2xf32>) {
  ^bb0(%a: f32, %t: f32, %g: f32, %out: f32):
    %c = arith.subf %a, %t : f32
    %d = arith.mulf %c, %g : f32
    linalg.yield %d : f32
  } -> tensor<4x2xf32>
  %m2 = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%m, %total : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%a: f32, %t: f32, %out: f32):
    %c = arith.addf %a, %t : f32
    linalg.yield %c : f32
  } -> tensor<2xf32>
  %one = arith.constant 1 : i64
  %ne = tensor.empty() : tensor<i64>
  %n2 = linalg.generic {indexing_maps = [#s, #s], iterator_types = []} ins(%n : tensor<i64>) outs(%ne : tensor<i64>) {
  ^bb0(%a: i64, %out: i64):
    %c = arith.addi %a, %one : i64
    linalg.yield %c : i64
  } -> tensor<i64>
  return %y, %m2, %n2 : tensor<4x2xf32>, tensor<2xf32>, tensor<i64>
}

// -----

// expected-error @+1 {{update of buffer 'bn.running_mean' is not computed by the step}}
func.func @buffer_passed_through(%m: tensor<2xf32> {wsc.buffer = "bn.running_mean"}, %x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}, tensor<2xf32> {wsc.buffer_update = "bn.running_mean"}) {
  return %x, %m : tensor<4x2xf32>, tensor<2xf32>
}

// -----

// Declarations are skipped; functions with control flow are rejected.
// SPLIT-LABEL: func.func private @declared
func.func private @declared(tensor<2xf32>) -> tensor<2xf32>

// -----

// expected-error @+1 {{wsc-form-kernels needs a function with a single block}}
func.func @branches(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
  cf.br ^next
^next:
  return %x : tensor<2xf32>
}

// -----

func.func @side_effects(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
  // expected-error @+1 {{'memref.alloc' op has side effects; wsc-form-kernels handles pure tensor programs only}}
  %m = memref.alloc() : memref<2xf32>
  return %x : tensor<2xf32>
}

// -----

// Variable tensor shape: a strip and a restore stay steps between kernels,
// even when the ops on both sides belong to one layer (its kernel splits).
// SPLIT-LABEL: func.func @padding_steps
// SPLIT: %[[S:.*]] = wsc.strip_padding %arg1, %arg2
// SPLIT: %[[K:.*]] = wsc.kernel "fc.fwd" {{.*}}(%[[S]], %arg0)
// SPLIT: %[[R:.*]] = wsc.restore_padding %[[K]], %arg2
// SPLIT: wsc.kernel "fc.fwd.1" {{.*}}(%[[R]], %arg0)
func.func @padding_steps(%w: tensor<4xf32> {wsc.param = "fc.weight"}, %x: tensor<2x8x4xf32> {wsc.input = 0 : i64},
                         %mask: tensor<2x8xi1> {wsc.input = 1 : i64}) -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
  %s = wsc.strip_padding %x, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %e = tensor.empty() : tensor<2x8x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %w : tensor<2x8x4xf32>, tensor<4xf32>) outs(%e : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %r = wsc.restore_padding %y, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %e2 = tensor.empty() : tensor<2x8x4xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r, %w : tensor<2x8x4xf32>, tensor<4xf32>) outs(%e2 : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  return %z : tensor<2x8x4xf32>
}
