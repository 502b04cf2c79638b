// The import's own errors in --wsc-pipeline are one located message, with a
// note per argument where that helps, and never the function after it.
// RUN: not wsc-opt %s --wsc-pipeline 2>&1 | FileCheck %s
// RUN: not wsc-opt %s --wsc-pipeline 2>&1 | wc -c | FileCheck --check-prefix=SIZE %s

// CHECK: import-diagnostics.mlir:[[@LINE+6]]:1: error: cannot tell the model inputs from the weights: no argument carries the batch (its dim 0) to dim 0 of a result; wsc needs the batch in dim 0 of every input and output
// CHECK: import-diagnostics.mlir:[[@LINE+5]]:20: note: argument #0 ('tensor<4x3xf32>') would be a weight
// CHECK: import-diagnostics.mlir:[[@LINE+4]]:41: note: argument #1 ('tensor<4xf32>') would be a weight
// CHECK-NOT: linalg.generic
// CHECK-NOT: see current operation
// SIZE: {{^[1-9][0-9]{2}$}}
func.func @forward(%x: tensor<4x3xf32>, %s: tensor<4xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x, %s : tensor<4x3xf32>, tensor<4xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%in: f32, %w: f32, %out: f32):
    %1 = arith.mulf %in, %w : f32
    %2 = arith.addf %1, %out : f32
    linalg.yield %2 : f32
  } -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
