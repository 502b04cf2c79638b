// RUN: wsc-opt %s --wsc-fold-transposes -split-input-file | FileCheck %s
// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-pipeline | FileCheck %s --check-prefix=PIPELINE

// A weight transpose feeding a matmul becomes the matmul's indexing map:
// one contraction reading W through (d0, d1, d2) -> (d1, d2).
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[WT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @weight_transpose
// CHECK: wsc.kernel
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[WT]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<3x4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @weight_transpose(%x: tensor<8x4xf32>, %w: tensor<3x4xf32>) -> tensor<8x3xf32> {
  %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x, %w) : (tensor<8x4xf32>, tensor<3x4xf32>) -> tensor<8x3xf32> {
  ^bb0(%a: tensor<8x4xf32>, %b: tensor<3x4xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %t = linalg.transpose ins(%b : tensor<3x4xf32>) outs(%e : tensor<4x3xf32>) permutation = [1, 0]
    %o = tensor.empty() : tensor<8x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%o : tensor<8x3xf32>) -> tensor<8x3xf32>
    %m = linalg.matmul ins(%a, %t : tensor<8x4xf32>, tensor<4x3xf32>) outs(%f : tensor<8x3xf32>) -> tensor<8x3xf32>
    wsc.yield %m : tensor<8x3xf32>
  }
  return %0 : tensor<8x3xf32>
}

// -----

// Only pure permutations fold: an activation feeding a matmul stays a
// separate op, so the contraction keeps its multiply-accumulate body.
// CHECK-LABEL: func.func @relu_stays
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK-NOT: arith.maximumf
// CHECK: arith.mulf
func.func @relu_stays(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>) -> tensor<8x3xf32> {
  %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x, %w) : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32> {
  ^bb0(%a: tensor<8x4xf32>, %b: tensor<4x3xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maximumf %in, %zero : f32
      linalg.yield %m : f32
    } -> tensor<8x4xf32>
    %o = tensor.empty() : tensor<8x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%o : tensor<8x3xf32>) -> tensor<8x3xf32>
    %m = linalg.matmul ins(%r, %b : tensor<8x4xf32>, tensor<4x3xf32>) outs(%f : tensor<8x3xf32>) -> tensor<8x3xf32>
    wsc.yield %m : tensor<8x3xf32>
  }
  return %0 : tensor<8x3xf32>
}

// -----

// Ops outside kernels are left alone.
// CHECK-LABEL: func.func @outside
// CHECK: linalg.transpose
func.func @outside(%w: tensor<3x4xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %t = linalg.transpose ins(%w : tensor<3x4xf32>) outs(%e : tensor<4x3xf32>) permutation = [1, 0]
  return %t : tensor<4x3xf32>
}

// The whole pipeline leaves no transpose in any kernel: the backward
// kernel reads the transposed weight stream through its map.
// PIPELINE-LABEL: func.func @train_step
// PIPELINE-NOT: linalg.transpose
// PIPELINE: return
