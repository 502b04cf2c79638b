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
  // expected-error @+1 {{'cf.assert' op has a condition that is not a compile-time constant and is outside a linalg body, where the runtime cannot check it ('index must be non-negative')}}
  cf.assert %ok, "index must be non-negative"
  return %x : tensor<4xi64>
}

// -----

// Pad amounts written as SSA constants (torch-mlir, IREE) fold into the
// pad, which then decomposes like any other.
// CHECK-LABEL: func.func @ssa_pad_amounts
// CHECK-NOT: tensor.pad
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 2] [2, 3, 4, 4] [1, 1, 1, 1] : tensor<2x3x4x4xf32> into tensor<2x3x6x8xf32>
func.func @ssa_pad_amounts(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x6x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[%c0, %c0, %c1, %c2] high[%c0, %c0, %c1, %c2] {
  ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
    tensor.yield %cst : f32
  } : tensor<2x3x4x4xf32> to tensor<2x3x6x8xf32>
  return %padded : tensor<2x3x6x8xf32>
}

// -----

// torch-mlir's embedding checks every token id inside the gather's body:
// data-dependent, so the asserts stay for the runtime to check.
// CHECK-LABEL: func.func @embedding_checks
// CHECK: linalg.generic
// CHECK: cf.assert %{{.*}}, "index must be smaller than dim size"
// CHECK: cf.assert %{{.*}}, "index must be larger or equal to 0"
// CHECK: tensor.extract
#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @embedding_checks(%ids: tensor<2x3xi64>, %table: tensor<10x4xf32>) -> tensor<2x3x4xf32> {
  %c10 = arith.constant 10 : index
  %c0_i64 = arith.constant 0 : i64
  %0 = tensor.empty() : tensor<2x3x4xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x3xi64>) outs(%0 : tensor<2x3x4xf32>) {
  ^bb0(%in: i64, %out: f32):
    %2 = arith.index_cast %in : i64 to index
    %3 = linalg.index 2 : index
    %4 = arith.cmpi slt, %2, %c10 : index
    cf.assert %4, "index must be smaller than dim size"
    %5 = arith.cmpi sge, %in, %c0_i64 : i64
    cf.assert %5, "index must be larger or equal to 0"
    %extracted = tensor.extract %table[%2, %3] : tensor<10x4xf32>
    linalg.yield %extracted : f32
  } -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

func.func @failing_body_check(%x: tensor<4xf32>) -> tensor<4xf32> {
  %false = arith.constant false
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    // expected-error @+1 {{'cf.assert' op always fails: 'unreachable'}}
    cf.assert %false, "unreachable"
    linalg.yield %in : f32
  } -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
