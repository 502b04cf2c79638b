// RUN: wsc-opt %s --wsc-import-torch-mlir="min-param-elements=4" -split-input-file -verify-diagnostics | FileCheck %s

// Inputs and outputs are marked; weights of at least 4 elements become
// parameters carrying their values: a dense_resource (named by its key,
// used twice, lifted once), a dense constant (const0), an immutable and a
// mutable global (named by their symbols). A splat and a small blob stay
// constants, the blob as dense. Globals no longer read are erased, and so is
// one never read (torch-mlir's @global_seed).
// CHECK-NOT: ml_program.global
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32> {wsc.input = 0 : i64}
// CHECK-SAME: %[[R:[^:]*]]: tensor<4x4xf32> {wsc.initial_value = dense_resource<torch_tensor_4_4_torch.float32> : tensor<4x4xf32>, wsc.param = "torch_tensor_4_4_torch.float32"}
// CHECK-SAME: %[[C:[^:]*]]: tensor<4x4xf32> {wsc.initial_value = dense<{{.*}}> : tensor<4x4xf32>, wsc.param = "const0"}
// CHECK-SAME: %[[G1:[^:]*]]: tensor<4x4xf32> {wsc.initial_value = dense<2.000000e+00> : tensor<4x4xf32>, wsc.param = "w1"}
// CHECK-SAME: %[[G2:[^:]*]]: tensor<4x4xf32> {wsc.initial_value = dense_resource<torch_tensor_4_4_torch.float32_1> : tensor<4x4xf32>, wsc.param = "w2"})
// CHECK-SAME: -> (tensor<2x4xf32> {wsc.output = 0 : i64}, tensor<2x4xf32> {wsc.output = 1 : i64})
// CHECK: arith.constant dense<1.000000e+00> : tensor<4x4xf32>
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: linalg.matmul ins(%[[X]], %[[R]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[R]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[C]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[G1]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[G2]] :
module {
  ml_program.global private @w1(dense<2.0> : tensor<4x4xf32>) : tensor<4x4xf32>
  ml_program.global private mutable @w2(dense_resource<torch_tensor_4_4_torch.float32_1> : tensor<4x4xf32>) : tensor<4x4xf32>
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @forward(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
    %r = arith.constant dense_resource<torch_tensor_4_4_torch.float32> : tensor<4x4xf32>
    %r2 = arith.constant dense_resource<torch_tensor_4_4_torch.float32> : tensor<4x4xf32>
    %c = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 5.0]]> : tensor<4x4xf32>
    %splat = arith.constant dense<1.0> : tensor<4x4xf32>
    %small = arith.constant dense_resource<torch_tensor_2_torch.float32> : tensor<2xf32>
    %g1 = ml_program.global_load_const @w1 : tensor<4x4xf32>
    %g2 = ml_program.global_load @w2 : tensor<4x4xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
    %0 = linalg.matmul ins(%x, %r : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    %1 = linalg.matmul ins(%0, %r2 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    %2 = linalg.matmul ins(%1, %c : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    %3 = linalg.matmul ins(%2, %g1 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    %4 = linalg.matmul ins(%3, %g2 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    %5 = linalg.matmul ins(%4, %splat : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1 floordiv 2)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%5, %small : tensor<2x4xf32>, tensor<2xf32>) outs(%e : tensor<2x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<2x4xf32>
    return %5, %6 : tensor<2x4xf32>, tensor<2x4xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_4_4_torch.float32: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F00000040",
      torch_tensor_4_4_torch.float32_1: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F00004040",
      torch_tensor_2_torch.float32: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// An exported function (wsc attributes) is left as it is.
// CHECK-LABEL: func.func @exported
// CHECK-SAME: (%{{.*}}: tensor<2x4xf32> {wsc.input = 0 : i64}) -> tensor<2x4xf32>
// CHECK: arith.constant dense<{{.*}}> : tensor<2x4xf32>
func.func @exported(%x: tensor<2x4xf32> {wsc.input = 0 : i64}) -> tensor<2x4xf32> {
  %c = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}

// -----

ml_program.global private mutable @w(dense<1.0> : tensor<4x4xf32>) : tensor<4x4xf32>
func.func @forward(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'ml_program.global_store' op writes global @w; wsc imports inference functions, whose weights are read-only}}
  ml_program.global_store @w = %x : tensor<4x4xf32>
  return %x : tensor<4x4xf32>
}

// -----

// expected-error @+1 {{argument #0 has type 'tensor<?x4xf32>'; a model input must be a static tensor whose dim 0 is the batch}}
func.func @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}

// -----

func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'tensor.cast' op has a dynamic shape ('tensor<?x4xf32>'); wsc compiles static shapes only}}
  %d = tensor.cast %x : tensor<2x4xf32> to tensor<?x4xf32>
  %s = tensor.cast %d : tensor<?x4xf32> to tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

func.func @forward(%x: tensor<2x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'arith.constant' op uses dense_resource<torch_tensor_missing>, whose blob is missing from the module's dialect_resources}}
  %w = arith.constant dense_resource<torch_tensor_missing> : tensor<4x4xf32>
  return %w : tensor<4x4xf32>
}

// -----

func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'arith.constant' op uses dense_resource<short>, whose blob holds 12 bytes, but 'tensor<2x2xf32>' needs 16}}
  %w = arith.constant dense_resource<short> : tensor<2x2xf32>
  return %w : tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      short: "0x040000000000803F0000803F0000803F"
    }
  }
#-}

// -----

func.func @forward(%x: tensor<2x4xf32>) -> tensor<4x4xf16> {
  // expected-error @+1 {{'arith.constant' op is a weight of 'tensor<4x4xf16>'; weights become MemoryX parameters, which are f32}}
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 5.0]]> : tensor<4x4xf16>
  return %w : tensor<4x4xf16>
}

// -----

// expected-error @+1 {{'ml_program.global' op holds 'tensor<4xi32>'; weights become MemoryX parameters, which are static f32 tensors}}
ml_program.global private @w(dense<[1, 2, 3, 4]> : tensor<4xi32>) : tensor<4xi32>
func.func @forward(%x: tensor<2x4xf32>) -> tensor<4xi32> {
  %w = ml_program.global_load_const @w : tensor<4xi32>
  return %w : tensor<4xi32>
}

// -----

// expected-error @+1 {{'ml_program.global' op has no initial value in the module; wsc takes the weights of an imported model from its IR}}
ml_program.global private mutable @w : tensor<4xf32>
func.func @forward(%x: tensor<2x4xf32>) -> tensor<4xf32> {
  %w = ml_program.global_load @w : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'tensor.concat' op is not supported by wsc; torch-mlir input may use func, arith, math, cf.assert, linalg structured ops, ml_program global loads and tensor empty, pad, cast, expand_shape, collapse_shape, extract_slice and insert_slice}}
  %c = tensor.concat dim(1) %x, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %c : tensor<2x8xf32>
}

// -----

// expected-error @+1 {{result #0 has type 'f32'; a model output must be a static tensor}}
func.func @forward(%x: tensor<2x4xf32>) -> f32 {
  %c = arith.constant 1.0 : f32
  return %c : f32
}

// -----

// expected-error @+1 {{has 2 blocks; wsc imports single-block functions}}
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  cf.br ^bb1
^bb1:
  return %x : tensor<2x4xf32>
}

// -----

func.func @forward(%x: tensor<2x4xf32>) -> tensor<2xindex> {
  // expected-error @+1 {{'arith.constant' op uses dense_resource<ids> of element type 'index'; wsc reads integer and float blobs only}}
  %w = arith.constant dense_resource<ids> : tensor<2xindex>
  return %w : tensor<2xindex>
}

{-#
  dialect_resources: {
    builtin: {
      ids: "0x0800000000000000000000000100000000000000"
    }
  }
#-}

// -----

// A global's declared type may differ from its value's.
ml_program.global private @w(dense<1.0> : tensor<2x2xf32>) : tensor<4xf32>
func.func @forward(%x: tensor<2x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ml_program.global_load_const' op reads 'tensor<4xf32>' from a global of 'tensor<2x2xf32>'}}
  %w = ml_program.global_load_const @w : tensor<4xf32>
  return %w : tensor<4xf32>
}
