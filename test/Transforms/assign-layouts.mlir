// RUN: wsc-opt %s --wsc-assign-layouts -split-input-file -verify-diagnostics | FileCheck %s

// Activations: features over x, batch over y (white paper Figure 15);
// weight-shaped tensors split H0 over x (Figure 17); scalars replicated.
// CHECK-LABEL: func.func @defaults
// CHECK: wsc.kernel "k" {{.*}}operand_layouts = [#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"]>, #wsc.layout<dims = ["h1", "h"], x = ["h"], y = []>]
// CHECK-SAME: result_layouts = [#wsc.layout<dims = [], x = [], y = []>, #wsc.layout<dims = ["b", "d1", "h"], x = ["h"], y = ["b", "d1"]>]
func.func @defaults(%x: tensor<8x4xf32> {wsc.input = 0 : i64}, %w: tensor<3x4xf32>) -> (tensor<f32>, tensor<8x4x3xf32>) {
  %0:2 = wsc.kernel "k" layer("k") phase(<forward>) (%x, %w) : (tensor<8x4xf32>, tensor<3x4xf32>) -> (tensor<f32>, tensor<8x4x3xf32>) {
  ^bb0(%a: tensor<8x4xf32>, %b: tensor<3x4xf32>):
    %s = tensor.empty() : tensor<f32>
    %t = tensor.empty() : tensor<8x4x3xf32>
    %v = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<8x4xf32>) outs(%t : tensor<8x4x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x4x3xf32>
    wsc.yield %s, %v : tensor<f32>, tensor<8x4x3xf32>
  }
  return %0#0, %0#1 : tensor<f32>, tensor<8x4x3xf32>
}

// -----

// A producer that left its result in another layout gets a conversion
// before the consumer; matching layouts get none.
// CHECK-LABEL: func.func @convert
// CHECK: %[[A:.*]] = wsc.kernel "producer"
// CHECK: %[[C:.*]] = wsc.layout_convert %[[A]] from(<dims = ["b", "h"], x = ["b"], y = ["h"]>) to(<dims = ["b", "h"], x = ["h"], y = ["b"]>) : tensor<8x4xf32>
// CHECK: wsc.kernel "consumer" {{.*}}(%[[C]], %[[A]])
func.func @convert(%x: tensor<8x4xf32> {wsc.input = 0 : i64}) -> tensor<8x4xf32> {
  %0 = wsc.kernel "producer" layer("p") phase(<forward>) (%x) {result_layouts = [#wsc.layout<dims = ["b", "h"], x = ["b"], y = ["h"]>]} : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    wsc.yield %a : tensor<8x4xf32>
  }
  %1 = wsc.kernel "consumer" layer("c") phase(<forward>) (%0, %0) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"]>, #wsc.layout<dims = ["b", "h"], x = ["b"], y = ["h"]>]} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>):
    wsc.yield %a : tensor<8x4xf32>
  }
  return %1 : tensor<8x4xf32>
}

// -----

// Two batch dims on one tensor cannot be sharded.
func.func @two_batch_dims(%x: tensor<4x4xf32> {wsc.input = 0 : i64}) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  // expected-error @+1 {{a tensor would need two different batch dims}}
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %c = arith.addf %a, %b : f32
    linalg.yield %c : f32
  } -> tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// expected-error @+1 {{batch argument #0 must be a tensor with a static dim 0}}
func.func @scalar_input(%x: f32 {wsc.input = 0 : i64}) -> f32 {
  return %x : f32
}

// -----

// expected-error @+1 {{batch arguments disagree on the batch size: 4 vs 5}}
func.func @two_batches(%x: tensor<4x2xf32> {wsc.input = 0 : i64}, %y: tensor<5xi64> {wsc.label = 0 : i64}) -> tensor<4x2xf32> {
  return %x : tensor<4x2xf32>
}

// -----

// [batch, 3] merged into 12 elements and split as [6, 2] would put half a
// sample's elements in each of two dims.
func.func @split_batch(%x: tensor<4x3xf32> {wsc.input = 0 : i64}) -> tensor<6x2xf32> {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x3xf32> into tensor<12xf32>
  // expected-error @+1 {{a reshape splits the batch dim across two dims}}
  %e = tensor.expand_shape %c [[0, 1]] output_shape [6, 2] : tensor<12xf32> into tensor<6x2xf32>
  return %e : tensor<6x2xf32>
}

// -----

// [seq, batch] merged into one dim is fine inside the program, but a result
// is gathered from the systems by concatenation along its batch dim.
func.func @merged_result(%x: tensor<4x3xf32> {wsc.input = 0 : i64}) -> tensor<12xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
  // expected-error @+1 {{result #0 merges other data outside its batch in dim 0}}
  return %c : tensor<12xf32>
}

// -----

// A batch that stays the outermost part of its dim may leave the function.
// CHECK-LABEL: func.func @batch_outermost_result
// CHECK: tensor.expand_shape
func.func @batch_outermost_result(%x: tensor<4x3xf32> {wsc.input = 0 : i64}) -> (tensor<12xf32>, tensor<4x1x3xf32>) {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x3xf32> into tensor<12xf32>
  %e = tensor.expand_shape %c [[0, 1, 2]] output_shape [4, 1, 3] : tensor<12xf32> into tensor<4x1x3xf32>
  return %c, %e : tensor<12xf32>, tensor<4x1x3xf32>
}
