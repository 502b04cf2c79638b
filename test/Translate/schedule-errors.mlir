// RUN: wsc-translate --wsc-to-schedule %s -split-input-file -verify-diagnostics
// Every construct the runtime cannot execute is rejected at translation,
// with its location.

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}) -> (tensor<4xf32> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %e = tensor.empty() : tensor<4xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        // expected-error @+1 {{'math.atan' op is not supported inside a kernel by the wsc runtime}}
        %s = math.atan %in : f32
        linalg.yield %s : f32
      } -> tensor<4xf32>
      wsc.yield %r : tensor<4xf32>
    }
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}) -> (tensor<4xf32> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %e = tensor.empty() : tensor<4xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        // expected-error @+1 {{'arith.extf' op has a result of type 'f64', which the runtime does not support}}
        %d = arith.extf %in : f32 to f64
        %t = arith.truncf %d : f64 to f32
        linalg.yield %t : f32
      } -> tensor<4xf32>
      wsc.yield %r : tensor<4xf32>
    }
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%x: tensor<4x4xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<4x4xf32>) -> tensor<4x2xf32> {
    ^bb0(%a: tensor<4x4xf32>):
      %i = arith.constant 1 : index
      // expected-error @+1 {{'tensor.extract_slice' op has dynamic offsets, sizes or strides; the wsc runtime needs static slices}}
      %s = tensor.extract_slice %a[0, %i] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
      wsc.yield %s : tensor<4x2xf32>
    }
    return %0 : tensor<4x2xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}) -> (tensor<4xf32> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      // expected-error @+1 {{'arith.constant' op constant dense_resource<blob> : tensor<4xf32> is not supported by the wsc runtime}}
      %c = arith.constant dense_resource<blob> : tensor<4xf32>
      wsc.yield %c : tensor<4xf32>
    }
    return %0 : tensor<4xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x04000000000000000000803F0000004000004040"
    }
  }
#-}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}) -> (tensor<4xf32> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %e = tensor.empty() : tensor<2xf32>
      // expected-error @+1 {{indexing map expression d0 floordiv 2 is not linear}}
      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0 floordiv 2)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%e : tensor<2xf32>) outs(%a : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32
      } -> tensor<4xf32>
      wsc.yield %r : tensor<4xf32>
    }
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}) -> (tensor<4xf32> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      // expected-error @+1 {{'tensor.empty' op produces 'tensor<4xf64>', which the wsc runtime does not support}}
      %e = tensor.empty() : tensor<4xf64>
      wsc.yield %a : tensor<4xf32>
    }
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  // expected-error @+1 {{argument #0 is neither a wsc.input, a wsc.label nor a wsc.random; were all parameters lowered}}
  func.func @f(%w: tensor<4xf32> {wsc.param = "w"}) -> (tensor<4xf32> {wsc.output = 0 : i64}) {
    return %w : tensor<4xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  // expected-error @+1 {{argument #1 is a wsc.random draw and must be a static f32 tensor, not 'tensor<4xi64>'}}
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}, %r: tensor<4xi64> {wsc.random = 0 : i64}) -> (tensor<4xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  // expected-error @+1 {{argument #0 has unsupported type 'tensor<4xf64>'}}
  func.func @f(%x: tensor<4xf64> {wsc.input = 0 : i64}) -> (tensor<4xf64> {wsc.output = 0 : i64}) {
    return %x : tensor<4xf64>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  // expected-error @+1 {{result #0 is neither the loss nor a wsc.output}}
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  wsc.memx.param @w : tensor<4xf32> optimizer(<sgd>)
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}) -> (tensor<4xf32> {wsc.output = 0 : i64}) {
    %s = wsc.memx.stream @w order(<row_major>) : !wsc.stream<tensor<4xf32>>
    %b = wsc.swarmx.broadcast %s : !wsc.stream<tensor<4xf32>>
    // expected-error @+1 {{'wsc.memx.update' op must consume a wsc.swarmx.reduce}}
    wsc.memx.update @w(%b) : !wsc.stream<tensor<4xf32>>
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  wsc.memx.param @w : tensor<4xf32> optimizer(<sgd>)
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}) -> (tensor<4xf32> {wsc.output = 0 : i64}) {
    %s = wsc.memx.stream @w order(<row_major>) : !wsc.stream<tensor<4xf16>>
    %b = wsc.swarmx.broadcast %s : !wsc.stream<tensor<4xf16>>
    // expected-error @+1 {{'wsc.swarmx.broadcast' op must broadcast a wsc.memx.stream}}
    %b2 = wsc.swarmx.broadcast %b : !wsc.stream<tensor<4xf16>>
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x, %b2) : (tensor<4xf32>, !wsc.stream<tensor<4xf16>>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>, %w: tensor<4xf32>):
      wsc.yield %a : tensor<4xf32>
    }
    return %0 : tensor<4xf32>
  }
}

// -----

// Found by scripts/mutation-fuzz.py: a module given to wsc-translate directly
// with a batch the schedule parser refuses (wsc-select-mode checks the same).
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  // expected-error @+1 {{global batch 0 is out of range [1, 2^40]: a step takes at least one sample, through an argument marked wsc.input or wsc.label}}
  func.func @f() -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  // expected-error @+1 {{global batch 4611686018427387904 is out of range [1, 2^40]}}
  func.func @f(%x: tensor<4611686018427387904xf32> {wsc.input = 0 : i64}) -> (tensor<4611686018427387904xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<4611686018427387904xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>, wsc.target = #wsc.target<systems = 3>} {
  // expected-error @+1 {{global batch 2 is smaller than systems=3: every system needs at least one sample}}
  func.func @f(%x: tensor<2x4xf32> {wsc.input = 0 : i64}) -> (tensor<2x4xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2x4xf32>
  }
}

// -----

// Found by scripts/mutation-fuzz.py: MLIR's verifier takes a negative slice
// stride, the runtime's body parser does not.
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%x: tensor<4x4xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<4x4xf32>) -> tensor<4x2xf32> {
    ^bb0(%a: tensor<4x4xf32>):
      // expected-error @+1 {{'tensor.extract_slice' op has strides entry -1; the wsc runtime takes strides in [1, 2^31 - 1]}}
      %s = tensor.extract_slice %a[0, 3] [4, 2] [1, -1] : tensor<4x4xf32> to tensor<4x2xf32>
      wsc.yield %s : tensor<4x2xf32>
    }
    return %0 : tensor<4x2xf32>
  }
}

// -----

// The output rules of a module given to wsc-translate directly (found by
// scripts/mutation-fuzz.py; wsc-select-mode checks them too).
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  // expected-error @+1 {{result #0 is the loss ({wsc.loss}) and must be a rank-0 f32 tensor, got 'tensor<4xf32>'}}
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}) -> (tensor<4xf32> {wsc.loss}) {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  // expected-error @+1 {{result #1 is a second 'output0'}}
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}) -> (tensor<4xf32> {wsc.output = 0 : i64}, tensor<4xf32> {wsc.output = 0 : i64}) {
    return %x, %x : tensor<4xf32>, tensor<4xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  // expected-error @+1 {{result #1 is a wsc.output, but a training step returns its loss only}}
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<4xf32> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "loss" layer("loss") phase(<forward>) (%x) : (tensor<4xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<4xf32>):
      %c = arith.constant dense<0.0> : tensor<f32>
      wsc.yield %c : tensor<f32>
    }
    return %0, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// wsc-translate parses without verifying and refuses what crashes MLIR 22's
// verifiers before it verifies (the checks of --wsc-verify-input).
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%a: tensor<16x6xf32> {wsc.input = 0 : i64}) -> (tensor<2x8x6xf32> {wsc.output = 0 : i64}) {
    // expected-error @+1 {{'tensor.expand_shape' op has an empty reassociation group (#1); each group names at least one dimension}}
    %y = tensor.expand_shape %a [[0, 1], []] output_shape [2, 8, 6] : tensor<16x6xf32> into tensor<2x8x6xf32>
    return %y : tensor<2x8x6xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%x: tensor<4xi64> {wsc.input = 0 : i64}) -> (tensor<4xi64> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<4xi64>) -> tensor<4xi64> {
    ^bb0(%a: tensor<4xi64>):
      %zero = arith.constant 0 : i64
      %e = tensor.empty() : tensor<4xi64>
      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xi64>) outs(%e : tensor<4xi64>) {
      ^bb0(%in: i64, %out: i64):
        // expected-error @+1 {{'arith.remsi' op divides by a constant zero; an integer divisor must not be 0}}
        %s = arith.remsi %in, %zero : i64
        linalg.yield %s : i64
      } -> tensor<4xi64>
      wsc.yield %r : tensor<4xi64>
    }
    return %0 : tensor<4xi64>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%t: tensor<4x3xf32> {wsc.label = 0 : i64}, %x: tensor<4xi64> {wsc.input = 0 : i64}) -> (tensor<4x3xf32> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%t, %x) : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32> {
    ^bb0(%table: tensor<4x3xf32>, %ids: tensor<4xi64>):
      %e = tensor.empty() : tensor<4x3xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<4xi64>) outs(%e : tensor<4x3xf32>) {
      ^bb0(%id: i64, %out: f32):
        %row = arith.index_cast %id : i64 to index
        %col = linalg.index 1 : index
        // expected-error @+1 {{'tensor.extract' op gathers from a tensor with a batch dim (dim 0) at an index other than the batch loop's linalg.index; a gather reads its own sample's rows, or a table that every sample shares, such as a parameter}}
        %v = tensor.extract %table[%row, %col] : tensor<4x3xf32>
        linalg.yield %v : f32
      } -> tensor<4x3xf32>
      wsc.yield %r : tensor<4x3xf32>
    }
    return %0 : tensor<4x3xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  // expected-error @+1 {{argument #1: wsc.ignore_index needs wsc.num_classes (the classes the index is ignored among)}}
  func.func @f(%x: tensor<4x3xf32> {wsc.input = 0 : i64}, %y: tensor<4xi64> {wsc.label = 0 : i64, wsc.ignore_index = -100 : i64}) -> (tensor<4x3xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<4x3xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  // expected-error @+1 {{argument #1: wsc.num_classes must be in [1, 2^40], got 0}}
  func.func @f(%x: tensor<4x3xf32> {wsc.input = 0 : i64}, %y: tensor<4xi64> {wsc.label = 0 : i64, wsc.num_classes = 0 : i64}) -> (tensor<4x3xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<4x3xf32>
  }
}

// -----

// An indexing map that leaves its operand (the step contract's rule, for a
// module given to wsc-translate directly): d0 = 0 with d1 = 2 reads index -2.
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%x: tensor<4xf32> {wsc.input = 0 : i64}) -> (tensor<4x3xf32> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<4xf32>) -> tensor<4x3xf32> {
    ^bb0(%a: tensor<4xf32>):
      %b = arith.constant dense<1.0> : tensor<3xf32>
      %e = tensor.empty() : tensor<4x3xf32>
      // expected-error @+1 {{'linalg.generic' op operand #0 dim 0 (size 4) is accessed at indices [-2, 3] by its indexing map (d0, d1) -> (d0 - d1); every index must lie inside the operand}}
      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 - d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
      ^bb0(%in: f32, %w: f32, %out: f32):
        %p = arith.mulf %in, %w : f32
        linalg.yield %p : f32
      } -> tensor<4x3xf32>
      wsc.yield %r : tensor<4x3xf32>
    }
    return %0 : tensor<4x3xf32>
  }
}
