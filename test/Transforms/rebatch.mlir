// RUN: wsc-opt %S/Inputs/batch-one-cnn.mlir --wsc-import-torch-mlir="min-param-elements=4" --wsc-legalize --wsc-rebatch="batch=8" | FileCheck %s
// RUN: wsc-opt %S/Inputs/batch-one-cnn.mlir --wsc-import-torch-mlir="min-param-elements=4" --wsc-legalize --wsc-rebatch | FileCheck %s --check-prefix=KEEP
// RUN: wsc-opt %s --wsc-rebatch="batch=8" -split-input-file -verify-diagnostics
// RUN: not wsc-opt %s --wsc-rebatch="batch=-2" -split-input-file 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not wsc-opt %S/Inputs/batch-one-cnn.mlir --wsc-pipeline="batch=-2" 2>&1 | FileCheck %s --check-prefix=PIPELINE

// NEGATIVE: error: batch must be >= 1 (or 0, the traced batch), got -2
// PIPELINE: error: wsc-pipeline: batch must be >= 1 (or 0, the traced batch), got -2

// torch-mlir's batch-1 export of a small CNN, as it prints one: padded
// convolution, flatten by collapse_shape, a linear layer, with its weights
// as constants. At batch=8 every tensor the sample flows through gets 8
// rows, and the ops that spell a size (the pad's insert_slice, the
// reshapes) follow; the weights do not change.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: tensor<8x1x6x6xf32> {wsc.input = 0 : i64}
// CHECK-SAME: tensor<2x1x3x3xf32> {{{.*}}wsc.param = "const0"}
// CHECK-SAME: tensor<72x5xf32> {{{.*}}wsc.param = "const1"}
// CHECK-SAME: -> (tensor<8x5xf32> {wsc.output = 0 : i64}, tensor<8x72x1xf32> {wsc.output = 1 : i64})
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 1] [8, 1, 6, 6] [1, 1, 1, 1] : tensor<8x1x6x6xf32> into tensor<8x1x8x8xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} -> tensor<8x2x6x6xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : tensor<8x2x6x6xf32> into tensor<8x72xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [8, 72, 1] : tensor<8x72xf32> into tensor<8x72x1xf32>
// CHECK: linalg.matmul {{.*}} -> tensor<8x5xf32>
// KEEP-LABEL: func.func @forward(
// KEEP-SAME: tensor<1x1x6x6xf32> {wsc.input = 0 : i64}
// KEEP-SAME: -> (tensor<1x5xf32> {wsc.output = 0 : i64}, tensor<1x72x1xf32> {wsc.output = 1 : i64})

// A sum over the batch (a mean of the outputs) ties the samples together.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @batch_mean(%arg0: tensor<1x4xf32> {wsc.input = 0 : i64}) -> (tensor<1x4xf32> {wsc.output = 0 : i64}) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'linalg.generic' op sums over the batch; batch= runs a graph at another batch size only when its samples are independent}}
  %2 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<1x4xf32>) outs(%1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %3 = arith.addf %in, %out : f32
    linalg.yield %3 : f32
  } -> tensor<4xf32>
  %r = tensor.expand_shape %2 [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
  return %r : tensor<1x4xf32>
}

// -----

// A constant with a value per traced sample (here a per-sample offset)
// has none for the other samples.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @per_sample_constant(%arg0: tensor<2x4xf32> {wsc.input = 0 : i64}) -> (tensor<2x4xf32> {wsc.output = 0 : i64}) {
  // expected-error @+1 {{'arith.constant' op holds a value per sample of the traced batch of 2; batch= cannot make one for another batch size}}
  %offsets = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %0 = tensor.empty() : tensor<2x4xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%arg0, %offsets : tensor<2x4xf32>, tensor<2x4xf32>) outs(%0 : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %2 = arith.addf %a, %b : f32
    linalg.yield %2 : f32
  } -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// -----

// A slice of one sample of the traced batch, copied over the other.
func.func @one_sample(%arg0: tensor<2x4xf32> {wsc.input = 0 : i64}) -> (tensor<2x4xf32> {wsc.output = 0 : i64}) {
  // expected-error @+1 {{'tensor.extract_slice' op takes part of the batch dim 0; batch= rescales only a batch dim taken whole}}
  %0 = tensor.extract_slice %arg0[0, 0] [1, 4] [1, 1] : tensor<2x4xf32> to tensor<1x4xf32>
  %1 = tensor.insert_slice %0 into %arg0[1, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// -----

// TOSA's batch-1 matmuls reshape [1, 16] into [1, 1, 16]: which unit dim
// then holds the sample, BatchDims cannot tell, and the value leaves the
// batch behind.
func.func @unit_dims_reshape(%arg0: tensor<1x16xf32> {wsc.input = 0 : i64}) -> (tensor<1x1x16xf32> {wsc.output = 0 : i64}) {
  // expected-error @+1 {{'tensor.expand_shape' op leaves the batch dim of its source behind (dim 0); batch= needs every value computed from a sample to keep it}}
  %expanded = tensor.expand_shape %arg0 [[0, 1], [2]] output_shape [1, 1, 16] : tensor<1x16xf32> into tensor<1x1x16xf32>
  return %expanded : tensor<1x1x16xf32>
}


// -----

// With no model input there is no batch to change.
// expected-error @+1 {{batch=8 needs a model input (wsc.input) to carry the batch; this function has none}}
func.func @no_input(%w: tensor<4xf32> {wsc.param = "w"}) -> (tensor<4xf32> {wsc.output = 0 : i64}) {
  return %w : tensor<4xf32>
}
