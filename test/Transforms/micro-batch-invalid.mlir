// RUN: wsc-opt %s -split-input-file -verify-diagnostics --wsc-micro-batch=micro-batch=2

// Steps whose batch may not be split: a forced micro-batch size is an error
// that says why (auto keeps the whole batch and says so: micro-batch.mlir).

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// The emulator does not run variable tensor shape steps in micro-batches.
module attributes {wsc.vts = #wsc.vts<threshold = 0.5, ragged_work = 0.75>} {
  // expected-error @+1 {{micro-batch=2: variable tensor shape steps are not run in micro-batches yet}}
  func.func @ragged(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<4x2xf32>
  }
}

// -----

// Nor sparse weights (CSR streams).
func.func @sparse(%x: tensor<4x2xf32> {wsc.input = 0 : i64},
                  // expected-error @+1 {{micro-batch=2: sparse weights are not streamed per micro-batch yet}}
                  %w: tensor<2x2xf32> {wsc.param = "w", wsc.sparsity = {density = 0.5 : f64, source = "explicit"}})
    -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<4x2xf32>
}

// -----

// Nor a slice of some of the samples (a benchmark's first): only the whole
// batch holds them.
func.func @first_sample(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<1x2xf32> {wsc.output = 0 : i64}) {
  // expected-error @+1 {{micro-batch=2: a slice takes some of the batch's samples, which only the whole batch holds}}
  %s = tensor.extract_slice %x[0, 0] [1, 2] [1, 1] : tensor<4x2xf32> to tensor<1x2xf32>
  return %s : tensor<1x2xf32>
}

// -----

// A size that covers the whole per-system batch splits nothing: the module
// gets no micro-batch size (wsc-run refuses one next to VTS or sparse steps).
// expected-remark @+1 {{none (micro-batch=2 covers the 2 samples each system runs): variable tensor shape steps are not run in micro-batches yet}}
module attributes {wsc.vts = #wsc.vts<threshold = 0.5, ragged_work = 0.75>, wsc.target = #wsc.target<systems = 2>} {
  func.func @whole(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<4x2xf32>
  }
}

// -----

// Found by scripts/mutation-fuzz.py: micro-batch=300 on a sparse model was
// moved to the whole shard and written to the schedule, which wsc-run refused.
// expected-remark @+1 {{none (micro-batch=2 covers the 2 samples each system runs): sparse weights are not streamed per micro-batch yet}}
module attributes {wsc.target = #wsc.target<systems = 2>} {
  func.func @sparse_whole(%x: tensor<4x2xf32> {wsc.input = 0 : i64},
                          %w: tensor<2x2xf32> {wsc.param = "w", wsc.sparsity = {density = 0.5 : f64, source = "explicit"}})
      -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<4x2xf32>
  }
}

// -----

// More micro-batches than a step takes (each streams every weight in again).
// expected-error @+1 {{micro-batch=2 makes 65537 micro-batches of the 131073 samples each system runs; a step takes at most 65536, as each streams every weight in again: use micro-batch=3 or more}}
module {
  func.func @many(%x: tensor<131073x2xf32> {wsc.input = 0 : i64}) -> (tensor<131073x2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<131073x2xf32>
  }
}
