// RUN: wsc-opt %s --wsc-lower-tosa -split-input-file -verify-diagnostics | FileCheck %s

// PyTorch Dynamo's TOSA path, in its printed style: a matmul with a
// reshape by a const_shape and a bias add. Upstream's lowerings leave
// linalg on tensors, and the dead shape constants go.
// CHECK-LABEL: func.func @forward(
// CHECK-NOT: tosa.
// CHECK: linalg.batch_matmul
// CHECK: tensor.collapse_shape
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NOT: tosa.
func.func @forward(%w: tensor<1x16x10xf32>, %x: tensor<1x1x16xf32>, %b: tensor<1x10xf32>) -> tensor<1x10xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.matmul %x, %w, %zp, %zp : (tensor<1x1x16xf32>, tensor<1x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x10xf32>
  %s = tosa.const_shape {values = dense<[1, 10]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %1 = tosa.reshape %0, %s : (tensor<1x1x10xf32>, !tosa.shape<2>) -> tensor<1x10xf32>
  %2 = tosa.add %1, %b : (tensor<1x10xf32>, tensor<1x10xf32>) -> tensor<1x10xf32>
  return %2 : tensor<1x10xf32>
}

// -----

// A module without TOSA is left as it is.
// CHECK-LABEL: func.func @plain(
// CHECK-NEXT: return
func.func @plain(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}

// -----

// TFLite's quantized graphs (int8 with quant types) are out of scope.
func.func @quantized(%x: tensor<1x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x4x!quant.uniform<i8:f32, 0.1>> {
  // expected-error @+1 {{'tosa.abs' op is a quantized op; wsc compiles floating-point graphs for training, and quantized inference is out of its scope}}
  %0 = tosa.abs %x : (tensor<1x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<1x4x!quant.uniform<i8:f32, 0.1>>
  return %0 : tensor<1x4x!quant.uniform<i8:f32, 0.1>>
}

// -----

// A TOSA op with no upstream lowering to linalg: upstream names it first.
func.func @custom(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{failed to legalize operation 'tosa.custom'}}
  %0 = tosa.custom %x {domain_name = "vendor", operator_name = "gelu", implementation_attrs = ""} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
