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
        // expected-error @+1 {{'math.sin' op is not supported inside a kernel by the wsc runtime}}
        %s = math.sin %in : f32
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
