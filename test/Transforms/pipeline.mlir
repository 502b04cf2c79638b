// RUN: wsc-opt %s --wsc-pipeline="mode=weight_streaming stream-dtype=f32" -split-input-file 2>/dev/null | FileCheck %s

// The pipeline leaves nothing for the canonicalizer: what folding transposes
// fuses away, it also erases. Training steps (a CNN with BatchNorm, MLPs)
// and this file's inference functions each come out unchanged by
// --canonicalize.
// RUN: wsc-opt %s --wsc-pipeline="mode=weight_streaming stream-dtype=f32" -split-input-file -o %t.infer 2>/dev/null
// RUN: wsc-opt %t.infer -split-input-file -o %t.infer.printed
// RUN: wsc-opt %t.infer --canonicalize -split-input-file -o %t.infer.canonical
// RUN: diff %t.infer.printed %t.infer.canonical
// RUN: wsc-opt %S/../Translate/Inputs/conv-bn-train.mlir --wsc-pipeline="systems=2" -o %t.cnn 2>/dev/null
// RUN: wsc-opt %t.cnn -o %t.cnn.printed
// RUN: wsc-opt %t.cnn --canonicalize -o %t.cnn.canonical
// RUN: diff %t.cnn.printed %t.cnn.canonical
// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-pipeline="systems=4 micro-batch=auto" -o %t.mlp 2>/dev/null
// RUN: wsc-opt %t.mlp -o %t.mlp.printed
// RUN: wsc-opt %t.mlp --canonicalize -o %t.mlp.canonical
// RUN: diff %t.mlp.printed %t.mlp.canonical

// A JAX export (StableHLO to linalg): the dense layer and the ReLU are
// private helpers called from @main, and the weights are arguments. The
// pipeline inlines the helpers and drops them, then imports @main: its
// weights stream from MemoryX (their values come from --weights).
// CHECK-LABEL: module @jit_mlp
// CHECK-DAG: wsc.memx.param @arg0 : tensor<8x4xf32>
// CHECK-DAG: wsc.memx.param @arg1 : tensor<8xf32>
// CHECK-NOT: call
// CHECK: func.func public @main(%{{[^:]*}}: tensor<2x4xf32> {wsc.input = 0 : i64}) -> (tensor<2x8xf32> {jax.result_info = "result[0]", wsc.output = 0 : i64})
// CHECK: wsc.kernel "arg0.fwd"
// CHECK: wsc.kernel "arg1.fwd"
// CHECK-NOT: func.func private
module @jit_mlp attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x4xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<8xf32> {mhlo.sharding = "{replicated}"}, %arg2: tensor<2x4xf32>) -> (tensor<2x8xf32> {jax.result_info = "result[0]"}) {
    %0 = call @dense(%arg2, %arg0, %arg1) : (tensor<2x4xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    %1 = call @relu(%0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
    return %1 : tensor<2x8xf32>
  }
  func.func private @dense(%x: tensor<2x4xf32>, %w: tensor<8x4xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
    %0 = tensor.empty() : tensor<4x8xf32>
    %transposed = linalg.transpose ins(%w : tensor<8x4xf32>) outs(%0 : tensor<4x8xf32>) permutation = [1, 0]
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<2x8xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %3 = linalg.matmul ins(%x, %transposed : tensor<2x4xf32>, tensor<4x8xf32>) outs(%2 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %broadcasted = linalg.broadcast ins(%b : tensor<8xf32>) outs(%1 : tensor<2x8xf32>) dimensions = [0]
    %mapped = linalg.map { arith.addf } ins(%3, %broadcasted : tensor<2x8xf32>, tensor<2x8xf32>) outs(%1 : tensor<2x8xf32>)
    return %mapped : tensor<2x8xf32>
  }
  func.func private @relu(%arg0: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %cst = arith.constant dense<0.000000e+00> : tensor<f32>
    %0 = tensor.empty() : tensor<2x8xf32>
    %broadcasted = linalg.broadcast ins(%cst : tensor<f32>) outs(%0 : tensor<2x8xf32>) dimensions = [0, 1]
    %mapped = linalg.map { arith.maximumf } ins(%arg0, %broadcasted : tensor<2x8xf32>, tensor<2x8xf32>) outs(%0 : tensor<2x8xf32>)
    return %mapped : tensor<2x8xf32>
  }
}

// -----

// One helper called twice (two layers of a Flax Dense): inlined at both
// calls. The weights are constants here, lifted as parameters.
// CHECK-LABEL: module @jit_two_layers
// CHECK-NOT: call
// CHECK: wsc.kernel "const0.fwd"
// CHECK: wsc.kernel "const1.fwd"
// CHECK-NOT: func.func private
module @jit_two_layers {
  func.func public @main(%arg0: tensor<4x32xf32>) -> (tensor<4x32xf32> {jax.result_info = ""}) {
    %w0 = arith.constant dense<0.5> : tensor<32x32xf32>
    %w1 = arith.constant dense<0.25> : tensor<32x32xf32>
    %0 = call @dense(%arg0, %w0) : (tensor<4x32xf32>, tensor<32x32xf32>) -> tensor<4x32xf32>
    %1 = call @dense(%0, %w1) : (tensor<4x32xf32>, tensor<32x32xf32>) -> tensor<4x32xf32>
    return %1 : tensor<4x32xf32>
  }
  func.func private @dense(%x: tensor<4x32xf32>, %w: tensor<32x32xf32>) -> tensor<4x32xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x32xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x32xf32>) -> tensor<4x32xf32>
    %2 = linalg.matmul ins(%x, %w : tensor<4x32xf32>, tensor<32x32xf32>) outs(%1 : tensor<4x32xf32>) -> tensor<4x32xf32>
    return %2 : tensor<4x32xf32>
  }
}
