// RUN: wsc-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: wsc-opt %s -split-input-file --wsc-verify-input -verify-diagnostics | FileCheck %s

// wsc-opt verifies parsed input in its first pass, wsc-verify-input, which
// refuses first what crashes MLIR 22's verifiers (each case below crashes
// the stock mlir-opt). Valid IR passes through unchanged.

// CHECK-LABEL: func.func @valid_reshapes_and_pad
// CHECK: linalg.broadcast
// CHECK: tensor.expand_shape
// CHECK: tensor.pad
func.func @valid_reshapes_and_pad(%a: tensor<3xf32>, %b: tensor<2x3xf32>, %c: tensor<16x6xf32>, %n: index)
    -> (tensor<2x3xf32>, tensor<2x8x6xf32>, tensor<?x6xf32>) {
  %r = linalg.broadcast ins(%a : tensor<3xf32>) outs(%b : tensor<2x3xf32>) dimensions = [0]
  %e = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 8, 6] : tensor<16x6xf32> into tensor<2x8x6xf32>
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %c low[%n, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<16x6xf32> to tensor<?x6xf32>
  return %r, %e, %p : tensor<2x3xf32>, tensor<2x8x6xf32>, tensor<?x6xf32>
}

// -----

func.func @broadcast_repeats_a_dimension(%a: tensor<f32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'linalg.broadcast' op repeats dimension 0 in 'dimensions'; each added dimension is named once}}
  %r = linalg.broadcast ins(%a : tensor<f32>) outs(%b : tensor<2x3xf32>) dimensions = [0, 0]
  return %r : tensor<2x3xf32>
}

// -----

func.func @expand_shape_with_an_empty_group(%a: tensor<16x6xf32>) -> tensor<2x8x6xf32> {
  // expected-error @+1 {{'tensor.expand_shape' op has an empty reassociation group (#1); each group names at least one dimension}}
  %y = tensor.expand_shape %a [[0, 1], []] output_shape [2, 8, 6] : tensor<16x6xf32> into tensor<2x8x6xf32>
  return %y : tensor<2x8x6xf32>
}

// -----

func.func @pad_with_a_dynamic_marker_and_no_value(%a: tensor<2x3xf32>) -> tensor<2x5xf32> {
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{'tensor.pad' op has 1 dynamic high amount(s) (-9223372036854775808 marks one) but 0 SSA high amount(s); each dynamic amount is given as an SSA value}}
  %y = tensor.pad %a low[0, 1] high[0, -9223372036854775808] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<2x3xf32> to tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}
