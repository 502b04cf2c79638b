// RUN: wsc-opt %s -split-input-file -verify-diagnostics --wsc-sync-batch-statistics --wsc-micro-batch=micro-batch=2

// Steps whose batch may not be split: a forced micro-batch size is an error
// that says why (auto keeps the whole batch and says so: micro-batch.mlir).

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// Centring by the batch mean uses a sum over the batch as a total: each
// micro-batch would centre by its own mean. The error is at the sum that
// wsc-sync-batch-statistics recorded.
func.func @centre(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  // expected-error @+1 {{micro-batch=2: the step uses a sum over its whole batch as a total (a batch statistic, or a mean divided by a count it computes), which each micro-batch would compute over its own samples}}
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %o = tensor.empty() : tensor<4x2xf32>
  %c = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<4x2xf32>, tensor<2xf32>) outs(%o : tensor<4x2xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.subf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

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

// A buffer update (running statistics) would happen once per micro-batch.
// expected-error @+1 {{micro-batch=2: the step updates buffers (running statistics), which would update once per micro-batch}}
func.func @buffers(%x: tensor<4x2xf32> {wsc.input = 0 : i64}, %b: tensor<2xf32> {wsc.buffer = "b"})
    -> (tensor<2xf32> {wsc.buffer_update = "b"}) {
  return %b : tensor<2xf32>
}

// -----

// A size that covers the whole per-system batch splits nothing: it is taken.
// expected-remark @+1 {{micro-batch 2 of 2 per system (forced)}}
module attributes {wsc.vts = #wsc.vts<threshold = 0.5, ragged_work = 0.75>, wsc.target = #wsc.target<systems = 2>} {
  func.func @whole(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<4x2xf32>
  }
}
