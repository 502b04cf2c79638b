// RUN: wsc-opt %s --wsc-inline-helpers -split-input-file -verify-diagnostics | FileCheck %s

// A private helper called twice is inlined at both calls and dropped; the
// inliner does not canonicalize (the import runs before any folding).
// CHECK-LABEL: func.func @main
// CHECK-NOT: call
// CHECK: linalg.matmul
// CHECK: linalg.matmul
// CHECK-NOT: func.func private
func.func @main(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = call @dense(%x, %w0) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = call @dense(%0, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
func.func private @dense(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// No call and one function: the module is left as it is, the unused
// constant included (folding is the canonicalizer's, later).
// CHECK-LABEL: func.func @step
// CHECK-NEXT: arith.constant 2.0
// CHECK-NEXT: return %arg0
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %unused = arith.constant 2.0 : f32
  return %x : tensor<4xf32>
}

// -----

// No call, but a private function nobody calls: symbol-dce drops it. A
// public one stays.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: @unused
// CHECK-LABEL: func.func @also_public
func.func @kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @unused(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @also_public(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// The inliner leaves a recursive helper and its calls alone; symbol-dce
// keeps it, as it is called.
// CHECK-LABEL: func.func @recursive_caller
// CHECK: call @loop
// CHECK: func.func private @loop
func.func @recursive_caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @loop(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @loop(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @loop(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A benchmark file whose layers are public functions that the whole model
// calls (tpp-mlir's ResNet-50 block): once inlined they are helpers, and
// dropped; the function nothing calls is the model.
// CHECK-LABEL: func.func @block(
// CHECK-NOT: call
// CHECK-NOT: func.func @layer
// expected-remark @+1 {{is called by another function, so it is a helper and not a model: inlined and dropped}}
func.func @layer(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %0 = linalg.copy ins(%x : tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
func.func @block(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = call @layer(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
