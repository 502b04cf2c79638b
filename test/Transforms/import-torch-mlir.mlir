// RUN: wsc-opt %s --wsc-import-torch-mlir="min-param-elements=4" -split-input-file -verify-diagnostics | FileCheck %s
// RUN: wsc-opt %S/Inputs/explicit-inputs.mlir --wsc-import-torch-mlir | FileCheck %s --check-prefix=BOTH
// RUN: wsc-opt %S/Inputs/explicit-inputs.mlir --wsc-import-torch-mlir="inputs=1" | FileCheck %s --check-prefix=ONE
// RUN: not wsc-opt %S/Inputs/explicit-inputs.mlir --wsc-import-torch-mlir="inputs=2" 2>&1 | FileCheck %s --check-prefix=RANGE

// Two arguments of the batch size with no role: both carry the batch, so
// both are inputs; inputs= makes one of them the weight.
// BOTH: %{{[^:]*}}: tensor<2x4xf32> {wsc.input = 0 : i64}, %{{[^:]*}}: tensor<2x4xf32> {wsc.input = 1 : i64}
// ONE: %{{[^:]*}}: tensor<2x4xf32> {wsc.param = "arg0"}, %{{[^:]*}}: tensor<2x4xf32> {wsc.input = 0 : i64}
// RANGE: error: inputs=2 names no argument of @forward, which has 2; inputs= lists argument positions from 0

// Inputs and outputs are marked; weights of at least 4 elements become
// parameters carrying their values: a dense_resource (named by its key,
// used twice, lifted once), a dense constant (const0), an immutable and a
// mutable global (named by their symbols), a splat (const1: stripped
// weights are splats). A splat used only as an accumulator's init and a
// small blob stay constants, the blob as dense. Globals no longer read are
// erased, and so is one never read (torch-mlir's @global_seed).
// CHECK-NOT: ml_program.global
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32> {wsc.input = 0 : i64}
// CHECK-SAME: %[[R:[^:]*]]: tensor<4x4xf32> {wsc.initial_value = dense_resource<torch_tensor_4_4_torch.float32> : tensor<4x4xf32>, wsc.param = "torch_tensor_4_4_torch.float32"}
// CHECK-SAME: %[[C:[^:]*]]: tensor<4x4xf32> {wsc.initial_value = dense<{{.*}}> : tensor<4x4xf32>, wsc.param = "const0"}
// CHECK-SAME: %[[S:[^:]*]]: tensor<4x4xf32> {wsc.initial_value = dense<1.000000e+00> : tensor<4x4xf32>, wsc.param = "const1"}
// CHECK-SAME: %[[G1:[^:]*]]: tensor<4x4xf32> {wsc.initial_value = dense<2.000000e+00> : tensor<4x4xf32>, wsc.param = "w1"}
// CHECK-SAME: %[[G2:[^:]*]]: tensor<4x4xf32> {wsc.initial_value = dense_resource<torch_tensor_4_4_torch.float32_1> : tensor<4x4xf32>, wsc.param = "w2"})
// CHECK-SAME: -> (tensor<2x4xf32> {wsc.output = 0 : i64}, tensor<2x4xf32> {wsc.output = 1 : i64})
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: %[[ACC:.*]] = arith.constant dense<0.000000e+00> : tensor<2x4xf32>
// CHECK: linalg.matmul ins(%[[X]], %[[R]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[R]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[C]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[G1]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[G2]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[S]] : {{.*}}) outs(%[[ACC]] :
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
    %acc = arith.constant dense<0.0> : tensor<2x4xf32>
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
    %5 = linalg.matmul ins(%4, %splat : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
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

// expected-error @+1 {{argument #0 has type 'tensor<?x4xf32>'; an argument must be a static tensor of rank >= 1: a model input (dim 0 the batch) or a weight}}
func.func @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}

// -----

func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x1x4xf32> {
  // expected-error @+1 {{'tensor.cast' op has a dynamic shape ('tensor<?x4xf32>'); wsc compiles static shapes only}}
  %d = tensor.cast %x : tensor<2x4xf32> to tensor<?x4xf32>
  %e = tensor.expand_shape %d [[0], [1, 2]] output_shape [2, 1, 4] : tensor<?x4xf32> into tensor<?x1x4xf32>
  %s = tensor.cast %e : tensor<?x1x4xf32> to tensor<2x1x4xf32>
  return %s : tensor<2x1x4xf32>
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

// A bf16 weight (torch-mlir dynamo's bf16 export) becomes a parameter of
// its f32 master copy, rounded back to bf16 where it is read; the compute
// stays bf16 (issue 40, class 4).
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xbf16> {wsc.input = 0 : i64}
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x4xf32> {wsc.initial_value = dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], {{.*}}> : tensor<4x4xf32>, wsc.param = "const{{[0-9]+}}"}
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: linalg.matmul ins(%[[X]], %[[N]] : tensor<2x4xbf16>, tensor<4x4xbf16>)
func.func @forward(%x: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 5.0]]> : tensor<4x4xbf16>
  %cst = arith.constant 0.000000e+00 : bf16
  %e = tensor.empty() : tensor<2x4xbf16>
  %f = linalg.fill ins(%cst : bf16) outs(%e : tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %y = linalg.matmul ins(%x, %w : tensor<2x4xbf16>, tensor<4x4xbf16>) outs(%f : tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}

// -----

// So does a global's: the load becomes the rounding of its master copy.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf16> {wsc.input = 0 : i64}
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x4xf32> {wsc.initial_value = dense<2.500000e-01> : tensor<4x4xf32>, wsc.param = "w16"}
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: linalg.matmul ins(%[[X]], %[[N]] : tensor<2x4xf16>, tensor<4x4xf16>)
ml_program.global private @w16(dense<0.25> : tensor<4x4xf16>) : tensor<4x4xf16>
func.func @forward(%x: tensor<2x4xf16>) -> tensor<2x4xf16> {
  %w = ml_program.global_load_const @w16 : tensor<4x4xf16>
  %cst = arith.constant 0.000000e+00 : f16
  %e = tensor.empty() : tensor<2x4xf16>
  %f = linalg.fill ins(%cst : f16) outs(%e : tensor<2x4xf16>) -> tensor<2x4xf16>
  %y = linalg.matmul ins(%x, %w : tensor<2x4xf16>, tensor<4x4xf16>) outs(%f : tensor<2x4xf16>) -> tensor<2x4xf16>
  return %y : tensor<2x4xf16>
}

// -----

func.func @forward(%x: tensor<2x4xf32>) -> tensor<4x4xf64> {
  // expected-error @+1 {{'arith.constant' op is a weight of 'tensor<4x4xf64>'; weights become MemoryX parameters, which are f32 (or bf16 and f16, from f32 master copies)}}
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 5.0]]> : tensor<4x4xf64>
  return %w : tensor<4x4xf64>
}

// -----

// expected-error @+1 {{'ml_program.global' op holds 'tensor<4xi32>'; weights become MemoryX parameters, which are static f32 tensors (or bf16 and f16, from f32 master copies)}}
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

// -----

// A JAX export passes its weights as arguments next to the data: the
// argument whose dim 0 carries the batch to dim 0 of the result is the
// input, the others are weights named by their position, with no value
// (wsc-run's --weights file gives them). Inputs are numbered among
// themselves; the exporter's own attributes stay.
// CHECK-LABEL: func.func public @main(
// CHECK-SAME: %{{[^:]*}}: tensor<8x4xf32> {mhlo.sharding = "{replicated}", wsc.param = "arg0"}
// CHECK-SAME: %{{[^:]*}}: tensor<8xf32> {mhlo.sharding = "{replicated}", wsc.param = "arg1"}
// CHECK-SAME: %{{[^:]*}}: tensor<2x4xf32> {wsc.input = 0 : i64}
// CHECK-SAME: -> (tensor<2x8xf32> {jax.result_info = "result[0]", wsc.output = 0 : i64})
// CHECK-NOT: wsc.initial_value
module @jit_mlp attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x4xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<8xf32> {mhlo.sharding = "{replicated}"}, %arg2: tensor<2x4xf32>) -> (tensor<2x8xf32> {jax.result_info = "result[0]"}) {
    %0 = tensor.empty() : tensor<4x8xf32>
    %transposed = linalg.transpose ins(%arg0 : tensor<8x4xf32>) outs(%0 : tensor<4x8xf32>) permutation = [1, 0]
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<2x8xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %3 = linalg.matmul ins(%arg2, %transposed : tensor<2x4xf32>, tensor<4x8xf32>) outs(%2 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %broadcasted = linalg.broadcast ins(%arg1 : tensor<8xf32>) outs(%1 : tensor<2x8xf32>) dimensions = [0]
    %mapped = linalg.map { arith.addf } ins(%3, %broadcasted : tensor<2x8xf32>, tensor<2x8xf32>) outs(%1 : tensor<2x8xf32>)
    return %mapped : tensor<2x8xf32>
  }
}

// -----

// Two inputs (the image, through a pad, and a per-sample scale) and a
// filter given as an argument before them.
// CHECK-LABEL: func.func @two_inputs(
// CHECK-SAME: %{{[^:]*}}: tensor<4x1x3x3xf32> {wsc.param = "arg0"}
// CHECK-SAME: %{{[^:]*}}: tensor<2x1x6x6xf32> {wsc.input = 0 : i64}
// CHECK-SAME: %{{[^:]*}}: tensor<2xf32> {wsc.input = 1 : i64}
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0)>
func.func @two_inputs(%w: tensor<4x1x3x3xf32>, %x: tensor<2x1x6x6xf32>, %s: tensor<2xf32>) -> tensor<2x4x6x6xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %cst : f32
  } : tensor<2x1x6x6xf32> to tensor<2x1x8x8xf32>
  %0 = tensor.empty() : tensor<2x4x6x6xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %w : tensor<2x1x8x8xf32>, tensor<4x1x3x3xf32>) outs(%1 : tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %s : tensor<2x4x6x6xf32>, tensor<2xf32>) outs(%0 : tensor<2x4x6x6xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.mulf %in, %in_0 : f32
    linalg.yield %4 : f32
  } -> tensor<2x4x6x6xf32>
  return %3 : tensor<2x4x6x6xf32>
}

// -----

// torch-mlir pads by SSA amounts (from i64 constants) into a dynamic type
// and casts back: the shape arithmetic folds before the checks, and the pad
// gets the static type (wsc-legalize folds the amounts).
// CHECK-LABEL: func.func @ssa_pad(
// CHECK: %[[P:.*]] = tensor.pad
// CHECK: } : tensor<2x3x4x4xf32> to tensor<2x3x6x8xf32>
// CHECK-NOT: tensor.cast
// CHECK: return %[[P]]
func.func @ssa_pad(%arg0: tensor<2x3x4x4xf32>) -> tensor<2x3x6x8xf32> {
  %int1 = arith.constant 1 : i64
  %int2 = arith.constant 2 : i64
  %c0 = arith.constant 0 : index
  %0 = arith.index_cast %int1 : i64 to index
  %1 = arith.index_cast %int2 : i64 to index
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %arg0 low[%c0, %c0, %0, %1] high[%c0, %c0, %0, %1] {
  ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
    tensor.yield %cst : f32
  } : tensor<2x3x4x4xf32> to tensor<?x?x?x?xf32>
  %cast = tensor.cast %padded : tensor<?x?x?x?xf32> to tensor<2x3x6x8xf32>
  return %cast : tensor<2x3x6x8xf32>
}

// -----

// The result has no batch in dim 0 (it sums over the argument's dim 0).
// expected-error @+2 {{cannot tell the model inputs from the weights: no argument plays an input's role (a convolution's image, a matmul's data) or carries the batch (its dim 0) to dim 0 of a result; name the inputs with --wsc-pipeline="inputs=0,..."}}
// expected-note @+1 {{argument #0 ('tensor<4x3xf32>') would be a weight}}
func.func @forward(%x: tensor<4x3xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x3xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.addf %in, %out : f32
    linalg.yield %1 : f32
  } -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// An integer argument broadcast over the rows plays a weight's role.
// expected-error @+1 {{argument #1 ('tensor<4xi64>') plays a weight's role, but weights become MemoryX parameters, which are f32; if it is a model input, say so with --wsc-pipeline="inputs=..."}}
func.func @forward(%x: tensor<2x4xf32>, %ids: tensor<4xi64>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %ids : tensor<2x4xf32>, tensor<4xi64>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %id: i64, %out: f32):
    %f = arith.sitofp %id : i64 to f32
    %1 = arith.addf %in, %f : f32
    linalg.yield %1 : f32
  } -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Found by scripts/mutation-fuzz.py: MLIR reads a pad amount of INT64_MIN
// (its marker for an SSA amount) as an operand that is not there, and its
// folders crash (docs/MutationFuzz.md). wsc-opt's first pass,
// wsc-verify-input, refuses it before the importer runs.
func.func @pad_int64_min(%x: tensor<2x5xf32>) -> tensor<2x6xf32> {
  %v = arith.constant 0.0 : f32
  // expected-error @+1 {{'tensor.pad' op has 1 dynamic low amount(s) (-9223372036854775808 marks one) but 0 SSA low amount(s); each dynamic amount is given as an SSA value}}
  %p = tensor.pad %x low[0, -9223372036854775808] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<2x5xf32> to tensor<2x6xf32>
  return %p : tensor<2x6xf32>
}

// -----

func.func @pad_negative_ssa(%x: tensor<2x5xf32>) -> tensor<2x6xf32> {
  %v = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = arith.constant -9223372036854775808 : i64
  %m = arith.index_cast %n : i64 to index
  // expected-error @+1 {{'tensor.pad' op has a negative high padding amount -9223372036854775808; pad amounts are >= 0}}
  %p = tensor.pad %x low[%c0, %c0] high[%c0, %m] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<2x5xf32> to tensor<?x?xf32>
  %c = tensor.cast %p : tensor<?x?xf32> to tensor<2x6xf32>
  return %c : tensor<2x6xf32>
}

// -----

func.func @pad_negative(%x: tensor<2x5xf32>) -> tensor<2x4xf32> {
  %v = arith.constant 0.0 : f32
  // expected-error @+1 {{'tensor.pad' op has a negative high padding amount -1; pad amounts are >= 0}}
  %p = tensor.pad %x low[0, 0] high[0, -1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<2x5xf32> to tensor<2x4xf32>
  return %p : tensor<2x4xf32>
}

// -----

// A batch-1 export with its weights as arguments (TF, JAX): the matmul's
// shared operand and the bias broadcast over the rows are weights, the
// data operand is the input, whatever the batch size.
// CHECK-LABEL: func.func @batch_one(
// CHECK-SAME: %{{[^:]*}}: tensor<4x8xf32> {wsc.param = "arg0"}
// CHECK-SAME: %{{[^:]*}}: tensor<8xf32> {wsc.param = "arg1"}
// CHECK-SAME: %{{[^:]*}}: tensor<1x4xf32> {wsc.input = 0 : i64}
func.func @batch_one(%w: tensor<4x8xf32>, %b: tensor<8xf32>, %x: tensor<1x4xf32>) -> tensor<1x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8xf32>) -> tensor<1x8xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<1x4xf32>, tensor<4x8xf32>) outs(%f : tensor<1x8xf32>) -> tensor<1x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0, %b : tensor<1x8xf32>, tensor<8xf32>) outs(%e : tensor<1x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.addf %in, %in_0 : f32
    linalg.yield %2 : f32
  } -> tensor<1x8xf32>
  return %1 : tensor<1x8xf32>
}

// -----

// A packed weight vector sliced into a convolution's filter (buddy-mlir's
// LeNet) is a weight; the windowed image is the input, even when the
// batch is folded away before the convolution (JAX at batch 1).
// CHECK-LABEL: func.func @packed_filter(
// CHECK-SAME: %{{[^:]*}}: tensor<40xf32> {wsc.param = "arg0"}
// CHECK-SAME: %{{[^:]*}}: tensor<1x1x6x6xf32> {wsc.input = 0 : i64}
func.func @packed_filter(%packed: tensor<40xf32>, %x: tensor<1x1x6x6xf32>) -> tensor<1x4x4x4xf32> {
  %slice = tensor.extract_slice %packed[0] [36] [1] : tensor<40xf32> to tensor<36xf32>
  %filter = tensor.expand_shape %slice [[0, 1, 2]] output_shape [4, 3, 3] : tensor<36xf32> into tensor<4x3x3xf32>
  %image = tensor.collapse_shape %x [[0, 1, 2], [3]] : tensor<1x1x6x6xf32> into tensor<6x6xf32>
  %cst = arith.constant dense<0.000000e+00> : tensor<4x4x4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d1 + d2, d3 + d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]} ins(%image, %filter : tensor<6x6xf32>, tensor<4x3x3xf32>) outs(%cst : tensor<4x4x4xf32>) {
  ^bb0(%in: f32, %k: f32, %out: f32):
    %m = arith.mulf %in, %k : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4x4xf32>
  %1 = tensor.expand_shape %0 [[0, 1], [2], [3]] output_shape [1, 4, 4, 4] : tensor<4x4x4xf32> into tensor<1x4x4x4xf32>
  return %1 : tensor<1x4x4x4xf32>
}

// -----

// Destination-passing style (tpp-mlir's benchmarks): an argument only
// written into is the result's buffer, no input; it is dropped. Integer
// arguments (ids) are inputs.
// CHECK-LABEL: func.func @into_output(
// CHECK-SAME: %{{[^:]*}}: tensor<2x4xi64> {wsc.input = 0 : i64}
// CHECK-SAME: %{{[^:]*}}: tensor<2x4xf32> {wsc.input = 1 : i64}
// CHECK-SAME: -> (tensor<2x4xf32> {wsc.output = 0 : i64})
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK: linalg.copy ins(%{{.*}} : tensor<2x4xf32>) outs(%[[E]] : tensor<2x4xf32>)
// expected-remark @+1 {{argument #2 of @into_output is only written into (a result's destination): dropped, and not a model input}}
func.func @into_output(%ids: tensor<2x4xi64>, %x: tensor<2x4xf32>, %out: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %ids : tensor<2x4xf32>, tensor<2x4xi64>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %id: i64, %o: f32):
    %f = arith.sitofp %id : i64 to f32
    %1 = arith.addf %in, %f : f32
    linalg.yield %1 : f32
  } -> tensor<2x4xf32>
  %r = linalg.copy ins(%0 : tensor<2x4xf32>) outs(%out : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// torch-mlir's TorchScript path passes Python floats as 0-d f64 inputs of
// generics and captures f64 scalars: each is truncated to f32 as
// arith.truncf rounds (upstream folds only exact truncations: 8.0, not
// 1e-5), and no f64 is left.
// CHECK-LABEL: func.func @f64_scalar(
// CHECK: linalg.generic {{.*}} ins(%{{[^:]*}} : tensor<2x4xf32>)
// CHECK-DAG: arith.constant 8.000000e+00 : f32
// CHECK-DAG: arith.constant 9.99999974E-6 : f32
// CHECK-NOT: f64
// CHECK: return
func.func @f64_scalar(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %scale = arith.constant dense<8.000000e+00> : tensor<f64>
  %eps = arith.constant 1.000000e-05 : f64
  %e = tensor.empty() : tensor<2x4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<2x4xf32>, tensor<f64>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %s: f64, %o: f32):
    %t = arith.truncf %s : f64 to f32
    %1 = arith.divf %in, %t : f32
    %u = arith.truncf %eps : f64 to f32
    %2 = arith.addf %1, %u : f32
    linalg.yield %2 : f32
  } -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Quantized int8 graphs (TFLite -> TOSA -> linalg) are out of scope.
func.func @int8(%x: tensor<2x4xi8>, %w: tensor<4x8xi8>) -> tensor<2x8xi32> {
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<2x8xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<2x8xi32>) -> tensor<2x8xi32>
  // expected-error @+1 {{'linalg.quantized_matmul' op is a quantized op; wsc compiles floating-point graphs for training, and quantized inference is out of its scope}}
  %0 = linalg.quantized_matmul ins(%x, %w, %c0, %c0 : tensor<2x4xi8>, tensor<4x8xi8>, i32, i32) outs(%f : tensor<2x8xi32>) -> tensor<2x8xi32>
  return %0 : tensor<2x8xi32>
}

// -----

// A batch norm's statistics broadcast into the activation do not take the
// activation's roles after it: the mean stays a weight although the
// normalized image then feeds a convolution as its image.
// CHECK-LABEL: func.func @normalized_image(
// CHECK-SAME: %{{[^:]*}}: tensor<1x2x6x6xf32> {wsc.input = 0 : i64}
// CHECK-SAME: %{{[^:]*}}: tensor<2xf32> {wsc.param = "arg1"}
// CHECK-SAME: %{{[^:]*}}: tensor<4x2x3x3xf32> {wsc.param = "arg2"}
func.func @normalized_image(%x: tensor<1x2x6x6xf32>, %mean: tensor<2xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %m = tensor.expand_shape %mean [[0, 1, 2, 3]] output_shape [1, 2, 1, 1] : tensor<2xf32> into tensor<1x2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x6x6xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %m : tensor<1x2x6x6xf32>, tensor<1x2x1x1xf32>) outs(%e : tensor<1x2x6x6xf32>) {
  ^bb0(%in: f32, %mu: f32, %o: f32):
    %1 = arith.subf %in, %mu : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x6x6xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%0, %w : tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %2 : tensor<1x4x4x4xf32>
}

// -----

// A splat is a weight only in a weight's role: the zeros a TOSA ReLU is
// lowered with (an activation-shaped splat beside the activation) stay a
// constant, while a splat matmul operand (a stripped weight) is lifted.
// CHECK-LABEL: func.func @relu_zeros(
// CHECK-SAME: %{{[^:]*}}: tensor<2x32x32xf32> {wsc.input = 0 : i64}
// CHECK-SAME: %{{[^:]*}}: tensor<32x32xf32> {wsc.initial_value = dense<5.000000e-01> : tensor<32x32xf32>, wsc.param = "const
// CHECK-NOT: wsc.initial_value
// CHECK: arith.constant dense<0.000000e+00> : tensor<2x32x32xf32>
func.func @relu_zeros(%x: tensor<2x32x32xf32>) -> tensor<2x32x32xf32> {
  %zeros = arith.constant dense<0.0> : tensor<2x32x32xf32>
  %w = arith.constant dense<0.5> : tensor<32x32xf32>
  %e = tensor.empty() : tensor<2x32x32xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %zeros : tensor<2x32x32xf32>, tensor<2x32x32xf32>) outs(%e : tensor<2x32x32xf32>) {
  ^bb0(%in: f32, %z: f32, %o: f32):
    %1 = arith.maximumf %in, %z : f32
    linalg.yield %1 : f32
  } -> tensor<2x32x32xf32>
  %c0 = arith.constant 0.0 : f32
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%0, %w : tensor<2x32x32xf32>, tensor<32x32xf32>) outs(%f : tensor<2x32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %3 = arith.mulf %a, %b : f32
    %4 = arith.addf %acc, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<2x32x32xf32>
  return %2 : tensor<2x32x32xf32>
}

// -----

// MLIR's printer elides large resources (dense_resource<__elided__>, as in
// a published BERT): zeros stand in, the weight-shaped one is still lifted
// (by its role), and the module says the values are placeholders.
// CHECK-LABEL: module attributes {wsc.placeholder_values}
// CHECK: func.func @elided(
// CHECK-SAME: %{{[^:]*}}: tensor<2x8xf32> {wsc.input = 0 : i64}
// CHECK-SAME: wsc.initial_value = dense<0.000000e+00> : tensor<8x4xf32>
// CHECK: arith.constant dense<0> : tensor<2xi64>
module {
  // expected-warning @+1 {{2 constants' values were elided (dense_resource<__elided__>): zeros stand in for them, and the schedule runs with wsc-run --model-only only}}
  func.func @elided(%x: tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2xi64>) {
    %w = arith.constant dense_resource<__elided__> : tensor<8x4xf32>
    %ids = arith.constant dense_resource<__elided__> : tensor<2xi64>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
    %0 = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    return %0, %ids : tensor<2x4xf32>, tensor<2xi64>
  }
}

// -----

// TF's and IREE's i32 ids: every read converts them (index_cast, sitofp,
// extsi), which reads the same values in i64, so the input becomes i64.
// CHECK-LABEL: func.func @i32_ids(
// CHECK-SAME: %{{[^:]*}}: tensor<2x3xi64> {wsc.input = 0 : i64}
// CHECK: ^bb0(%{{[^:]*}}: i64, %{{[^:]*}}: f32):
// CHECK-NEXT: arith.sitofp %{{.*}} : i64 to f32
// CHECK-NOT: i32
func.func @i32_ids(%ids: tensor<2x3xi32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<2x3xi32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: i32, %o: f32):
    %1 = arith.sitofp %in : i32 to f32
    linalg.yield %1 : f32
  } -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Integer arithmetic would wrap at 32 bits and not at 64: refused.
func.func @i32_sum(%ids: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %e = tensor.empty() : tensor<2x3xi32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<2x3xi32>) outs(%e : tensor<2x3xi32>) {
  ^bb0(%in: i32, %o: i32):
    // expected-error @+1 {{'arith.addi' op reads argument #0 ('tensor<2x3xi32>') other than by converting it (index_cast, sitofp, extsi); the runtime computes integers in i64, and only a conversion reads an 'i32' the same at that width}}
    %1 = arith.addi %in, %in : i32
    linalg.yield %1 : i32
  } -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
