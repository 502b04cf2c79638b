// RUN: wsc-opt %s --wsc-legalize -split-input-file -verify-diagnostics | FileCheck %s

// A convolution's zero padding becomes a fill and an insert_slice.
// CHECK-LABEL: func.func @conv_padding
// CHECK-SAME: (%[[X:.*]]: tensor<4x3x12x12xf32>)
// CHECK-NOT: tensor.pad
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x3x14x14xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4x3x14x14xf32>)
// CHECK: tensor.insert_slice %[[X]] into %[[F]][0, 0, 1, 1] [4, 3, 12, 12] [1, 1, 1, 1] : tensor<4x3x12x12xf32> into tensor<4x3x14x14xf32>
func.func @conv_padding(%x: tensor<4x3x12x12xf32>) -> tensor<4x3x14x14xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<4x3x12x12xf32> to tensor<4x3x14x14xf32>
  return %p : tensor<4x3x14x14xf32>
}

// -----

// A max pool pads with -inf, on one side only.
// CHECK-LABEL: func.func @pool_padding
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEG]] : f32)
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [2, 8, 5, 5] [1, 1, 1, 1] : tensor<2x8x5x5xf32> into tensor<2x8x6x6xf32>
func.func @pool_padding(%x: tensor<2x8x5x5xf32>) -> tensor<2x8x6x6xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 0, 0] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<2x8x5x5xf32> to tensor<2x8x6x6xf32>
  return %p : tensor<2x8x6x6xf32>
}

// -----

func.func @dynamic_padding(%x: tensor<4x?xf32>, %n: index) -> tensor<4x?xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'tensor.pad' op cannot be decomposed into a fill and an insert_slice; wsc supports static padding with a constant value}}
  %p = tensor.pad %x low[0, %n] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x?xf32> to tensor<4x?xf32>
  return %p : tensor<4x?xf32>
}

// -----

// torch-mlir's static shape checks fold to true and disappear.
// CHECK-LABEL: func.func @static_shape_checks
// CHECK-NOT: cf.assert
// CHECK: return
func.func @static_shape_checks(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %d = tensor.dim %x, %c1 : tensor<4x8xf32>
  %ok = arith.cmpi eq, %d, %c8 : index
  cf.assert %ok, "mismatched size for broadcast"
  %true = arith.constant true
  cf.assert %true, "always holds"
  return %x : tensor<4x8xf32>
}

// -----

func.func @failing_check(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %d = tensor.dim %x, %c0 : tensor<4x8xf32>
  %ok = arith.cmpi eq, %d, %c8 : index
  // expected-error @+1 {{'cf.assert' op always fails: 'expected 8 rows'}}
  cf.assert %ok, "expected 8 rows"
  return %x : tensor<4x8xf32>
}

// -----

func.func @value_check(%x: tensor<4xi64>, %i: index) -> tensor<4xi64> {
  %v = tensor.extract %x[%i] : tensor<4xi64>
  %zero = arith.constant 0 : i64
  %ok = arith.cmpi sge, %v, %zero : i64
  // expected-error @+1 {{'cf.assert' op has a condition that is not a compile-time constant; wsc checks only static shapes ('index must be non-negative')}}
  cf.assert %ok, "index must be non-negative"
  return %x : tensor<4xi64>
}
