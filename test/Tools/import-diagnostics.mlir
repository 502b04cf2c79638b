// The import's own errors in --wsc-pipeline are one located message, with a
// note per argument where that helps, and never the function after it.
// RUN: not wsc-opt %s --wsc-pipeline 2>&1 | FileCheck %s
// RUN: not wsc-opt %s --wsc-pipeline 2>&1 | wc -c | FileCheck --check-prefix=SIZE %s

// CHECK: import-diagnostics.mlir:[[@LINE+5]]:1: error: cannot tell the model inputs from the weights: no argument plays an input's role (a convolution's image, a matmul's data) or carries the batch (its dim 0) to dim 0 of a result; name the inputs with --wsc-pipeline="inputs=0,..."
// CHECK: import-diagnostics.mlir:[[@LINE+4]]:20: note: argument #0 ('tensor<4x1x3x3xf32>') would be a weight
// CHECK-NOT: linalg.conv
// CHECK-NOT: see current operation
// SIZE: {{^[1-9][0-9]{2}$}}
func.func @forward(%w: tensor<4x1x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %image = arith.constant dense<1.0> : tensor<2x1x8x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%image, %w : tensor<2x1x8x8xf32>, tensor<4x1x3x3xf32>) outs(%f : tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}
