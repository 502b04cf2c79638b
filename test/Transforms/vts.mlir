// RUN: wsc-opt %s -split-input-file --wsc-vts -verify-diagnostics | FileCheck %s
// RUN: not wsc-opt %s --wsc-vts=mode=sometimes 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not wsc-opt %s --wsc-vts=expected-valid-fraction=1.5 2>&1 | FileCheck %s --check-prefix=FRACTION
// MODE: for the --mode option: Cannot find option named 'sometimes'!
// FRACTION: error: wsc-vts: expected-valid-fraction must be in (0, 1], got 1.5
// The negative cases at the end fail in every mode, hence `not`.
// RUN: not wsc-opt %s -split-input-file --wsc-vts=mode=off 2>/dev/null | FileCheck %s --check-prefix=OFF
// RUN: not wsc-opt %s -split-input-file --wsc-vts="expected-valid-fraction=1.0" 2>/dev/null | FileCheck %s --check-prefix=DENSE
// RUN: not wsc-opt %s -split-input-file --wsc-vts=mode=off 2>&1 >/dev/null | FileCheck %s --check-prefix=OFFREMARK
// RUN: not wsc-opt %s -split-input-file --wsc-vts="expected-valid-fraction=1.0" 2>&1 >/dev/null | FileCheck %s --check-prefix=DENSEREMARK
// OFFREMARK: remark: VTS off: removed 1 strip_padding and 0 restore_padding ops
// DENSEREMARK: remark: VTS: 100% of the step's work runs on valid tokens only, between 1 strip_padding and 1 restore_padding ops; stripping pays below a valid-token fraction of 0.0000; at the expected 1.0000 it keeps the dense path

// A strip after a token-wise op moves to the input; the result, a function
// result, gets the one restore.
// CHECK-LABEL: func.func @hoist
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %[[M:.*]]: tensor<2x8xi1> {wsc.input = 1 : i64})
// CHECK: %[[S:.*]] = wsc.strip_padding %[[X]], %[[M]] : tensor<2x8x4xf32>, tensor<2x8xi1>
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<2x8x4xf32>)
// CHECK-NOT: wsc.strip_padding
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<2x8x4xf32>)
// CHECK: %[[R:.*]] = wsc.restore_padding %[[EXP]], %[[M]] : tensor<2x8x4xf32>, tensor<2x8xi1>
// CHECK: return %[[R]]
// OFF-LABEL: func.func @hoist
// OFF-NOT: wsc.strip_padding
// OFF-NOT: wsc.restore_padding
// DENSE-LABEL: func.func @hoist
// DENSE-NOT: wsc.strip_padding
func.func @hoist(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %mask: tensor<2x8xi1> {wsc.input = 1 : i64})
    -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
  // expected-remark @-2 {{VTS: 100% of the step's work runs on valid tokens only, between 1 strip_padding and 1 restore_padding ops; stripping pays below a valid-token fraction of}}
  %e = tensor.empty() : tensor<2x8x4xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x4xf32>) outs(%e : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %s = wsc.strip_padding %sq, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %e2 = tensor.empty() : tensor<2x8x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x8x4xf32>) outs(%e2 : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x2 = math.exp %a : f32
    linalg.yield %x2 : f32
  } -> tensor<2x8x4xf32>
  return %y : tensor<2x8x4xf32>
}

// -----

// Token-wise layers through a [batch * seq, hidden] matmul stay ragged; a
// sum over the sequence leaves the region with no restore at all.
// CHECK-LABEL: func.func @matmul_and_pool
// CHECK: wsc.strip_padding %arg0, %arg2
// CHECK-NOT: wsc.restore_padding
// CHECK: return
func.func @matmul_and_pool(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %w: tensor<4x6xf32> {wsc.param = "fc.weight"},
                           %mask: tensor<2x8xi1> {wsc.input = 1 : i64}) -> (tensor<2x6xf32> {wsc.output = 0 : i64}) {
  // expected-remark @-2 {{VTS: 99% of the step's work runs on valid tokens only, between 1 strip_padding and 0 restore_padding ops}}
  %s = wsc.strip_padding %x, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %flat = tensor.collapse_shape %s [[0, 1], [2]] : tensor<2x8x4xf32> into tensor<16x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x6xf32>) -> tensor<16x6xf32>
  %mm = linalg.matmul ins(%flat, %w : tensor<16x4xf32>, tensor<4x6xf32>) outs(%f : tensor<16x6xf32>) -> tensor<16x6xf32>
  %y = tensor.expand_shape %mm [[0, 1], [2]] output_shape [2, 8, 6] : tensor<16x6xf32> into tensor<2x8x6xf32>
  %e2 = tensor.empty() : tensor<2x6xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x6xf32>) -> tensor<2x6xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%y : tensor<2x8x6xf32>) outs(%f2 : tensor<2x6xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x6xf32>
  return %sum : tensor<2x6xf32>
}

// -----

// A shift along the sequence cannot run on each sample's prefix: the
// tensor is restored right before it.
// CHECK-LABEL: func.func @shift
// CHECK: %[[S:.*]] = wsc.strip_padding %arg0, %arg1
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[S]]
// CHECK: %[[R:.*]] = wsc.restore_padding %[[SQ]], %arg1
// CHECK: linalg.generic {{.*}} ins(%[[R]] : tensor<2x8x4xf32>)
func.func @shift(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %mask: tensor<2x8xi1> {wsc.input = 1 : i64})
    -> (tensor<2x7x4xf32> {wsc.output = 0 : i64}) {
  // expected-remark @-2 {{VTS: 53% of the step's work runs on valid tokens only, between 1 strip_padding and 1 restore_padding ops}}
  %s = wsc.strip_padding %x, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %e = tensor.empty() : tensor<2x8x4xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x8x4xf32>) outs(%e : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %e2 = tensor.empty() : tensor<2x7x4xf32>
  %next = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1 + 1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sq : tensor<2x8x4xf32>) outs(%e2 : tensor<2x7x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<2x7x4xf32>
  return %next : tensor<2x7x4xf32>
}

// -----

// The first token of each sample (BERT's [CLS]) is a fixed prefix: it
// leaves the region as a dense tensor with no restore.
// CHECK-LABEL: func.func @first_token
// CHECK: %[[S:.*]] = wsc.strip_padding %arg0, %arg1
// CHECK: tensor.extract_slice %[[S]][0, 0, 0] [2, 1, 4] [1, 1, 1]
// CHECK-NOT: wsc.restore_padding
func.func @first_token(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %mask: tensor<2x8xi1> {wsc.input = 1 : i64})
    -> (tensor<2x4xf32> {wsc.output = 0 : i64}) {
  // expected-remark @-2 {{VTS: 0% of the step's work runs on valid tokens only, between 1 strip_padding and 0 restore_padding ops}}
  %s = wsc.strip_padding %x, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %cls = tensor.extract_slice %s[0, 0, 0] [2, 1, 4] [1, 1, 1] : tensor<2x8x4xf32> to tensor<2x4xf32>
  return %cls : tensor<2x4xf32>
}

// -----

// Attention scores: the query and key dims of [batch, seq, seq] are both
// ragged; the softmax-like reduction and the mask bias derived from the
// padding mask run ragged too (the mask input is stripped by itself).
// CHECK-LABEL: func.func @scores
// CHECK-DAG: wsc.strip_padding %arg0, %arg1
// CHECK-DAG: wsc.strip_padding %arg1, %arg1
// CHECK: wsc.restore_padding
func.func @scores(%q: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %mask: tensor<2x8xi1> {wsc.input = 1 : i64})
    -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
  // expected-remark @-2 {{VTS: 100% of the step's work runs on valid tokens only, between 2 strip_padding and 1 restore_padding ops}}
  %s = wsc.strip_padding %q, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (b, j, k)>, affine_map<(b, i, j, k) -> (b, i, j)>],
                        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s, %s : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%f : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %e2 = tensor.empty() : tensor<2x8x8xf32>
  %biased = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, j)>, affine_map<(b, i, j) -> (b, i, j)>],
                            iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sc, %mask : tensor<2x8x8xf32>, tensor<2x8xi1>) outs(%e2 : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %v: i1, %o: f32):
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %v, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %e3 = tensor.empty() : tensor<2x8x4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %ctx = linalg.generic {indexing_maps = [affine_map<(b, i, k, j) -> (b, i, j)>, affine_map<(b, i, k, j) -> (b, j, k)>, affine_map<(b, i, k, j) -> (b, i, k)>],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%biased, %s : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%f3 : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x8x4xf32>
  return %ctx : tensor<2x8x4xf32>
}

// -----

// A slice that starts past a sample's first token, and a reshape that would
// put the hidden dim outside the sequence, cannot run on each sample's
// prefix: the transposed tensor is restored, and the slice reads the
// unstripped input.
// CHECK-LABEL: func.func @boundaries
// CHECK: %[[S:.*]] = wsc.strip_padding %arg0, %arg1
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[S]]
// CHECK: %[[R1:.*]] = wsc.restore_padding %[[T]], %arg1 {seq_dim = 2 : i64}
// CHECK: tensor.collapse_shape %[[R1]]
// CHECK: tensor.extract_slice %arg0[0, 1, 0]
func.func @boundaries(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %mask: tensor<2x8xi1> {wsc.input = 1 : i64})
    -> (tensor<2x32xf32> {wsc.output = 0 : i64}, tensor<2x7x4xf32> {wsc.output = 1 : i64}) {
  // expected-remark @-2 {{VTS: 100% of the step's work runs on valid tokens only, between 1 strip_padding and 1 restore_padding ops}}
  %s = wsc.strip_padding %x, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %e = tensor.empty() : tensor<2x4x8xf32>
  %t = linalg.transpose ins(%s : tensor<2x8x4xf32>) outs(%e : tensor<2x4x8xf32>) permutation = [0, 2, 1]
  %flat = tensor.collapse_shape %t [[0], [1, 2]] : tensor<2x4x8xf32> into tensor<2x32xf32>
  %next = tensor.extract_slice %s[0, 1, 0] [2, 7, 4] [1, 1, 1] : tensor<2x8x4xf32> to tensor<2x7x4xf32>
  return %flat, %next : tensor<2x32xf32>, tensor<2x7x4xf32>
}

// -----

// The strip would move before the op that computes the mask.
func.func @late_mask(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %ids: tensor<2x8xi64> {wsc.input = 1 : i64})
    -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
  %e = tensor.empty() : tensor<2x8x4xf32>
  // expected-error @+1 {{would run on valid tokens before the padding mask is computed; compute the mask first (or pass it in as an input)}}
  %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x4xf32>) outs(%e : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %e2 = tensor.empty() : tensor<2x8xi1>
  // expected-note @+1 {{the mask}}
  %mask = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<2x8xi64>) outs(%e2 : tensor<2x8xi1>) {
  ^bb0(%a: i64, %o: i1):
    %zero = arith.constant 0 : i64
    %v = arith.cmpi ne, %a, %zero : i64
    linalg.yield %v : i1
  } -> tensor<2x8xi1>
  %s = wsc.strip_padding %sq, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %r = wsc.restore_padding %s, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  return %r : tensor<2x8x4xf32>
}

// -----

// A sum over the batch fed back into each sample (batch statistics, a mean
// over the kept labels) is one sample's inside a ragged kernel: it is
// all-reduced right after the sum, so every sample reads the batch's total.
// CHECK-LABEL: func.func @batch_mean
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "parallel"]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %[[TOTAL:.+]] = wsc.swarmx.all_reduce %[[SUM]] : tensor<4xf32>
// CHECK: ins(%{{.+}}, %[[TOTAL]] : tensor<2x8x4xf32>, tensor<4xf32>)
// expected-remark @+1 {{VTS: }}
func.func @batch_mean(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %mask: tensor<2x8xi1> {wsc.input = 1 : i64})
    -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
  %s = wsc.strip_padding %x, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%s : tensor<2x8x4xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<2x8x4xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %sum : tensor<2x8x4xf32>, tensor<4xf32>) outs(%e2 : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.subf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x8x4xf32>
  return %c : tensor<2x8x4xf32>
}

// -----

// The total of a non-f32 sum cannot be all-reduced.
func.func @integer_count(%x: tensor<2x8xi64> {wsc.input = 0 : i64}, %mask: tensor<2x8xi1> {wsc.input = 1 : i64})
    -> (tensor<2x8xi64> {wsc.output = 0 : i64}) {
  %s = wsc.strip_padding %x, %mask : tensor<2x8xi64>, tensor<2x8xi1>
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<i64>
  %f = linalg.fill ins(%zero : i64) outs(%e : tensor<i64>) -> tensor<i64>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%s : tensor<2x8xi64>) outs(%f : tensor<i64>) {
  ^bb0(%a: i64, %acc: i64):
    %r = arith.addi %a, %acc : i64
    linalg.yield %r : i64
  } -> tensor<i64>
  %e2 = tensor.empty() : tensor<2x8xi64>
  // expected-error @+1 {{uses a sum over the batch of type 'tensor<i64>'; SwarmX all-reduces f32 tensors only}}
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %n : tensor<2x8xi64>, tensor<i64>) outs(%e2 : tensor<2x8xi64>) {
  ^bb0(%a: i64, %m: i64, %o: i64):
    %r = arith.subi %a, %m : i64
    linalg.yield %r : i64
  } -> tensor<2x8xi64>
  return %c : tensor<2x8xi64>
}

// -----

// Outside the ragged region a sum over the batch is the whole batch's (a
// cross entropy's count of kept labels, scaling each sample's gradient):
// nothing runs per sample there, so it is accepted.
// CHECK-LABEL: func.func @whole_batch_sum_outside
// CHECK: wsc.strip_padding
// expected-remark @+1 {{VTS: 96% of the step's work runs on valid tokens only}}
func.func @whole_batch_sum_outside(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %mask: tensor<2x8xi1> {wsc.input = 1 : i64},
                                   %y: tensor<2xf32> {wsc.label = 0 : i64})
    -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}, tensor<2xf32> {wsc.output = 1 : i64}) {
  %s = wsc.strip_padding %x, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %e = tensor.empty() : tensor<2x8x4xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x8x4xf32>) outs(%e : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x8x4xf32>
  %r = wsc.restore_padding %relu, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<f32>
  %c1 = linalg.fill ins(%zero : f32) outs(%c0 : tensor<f32>) -> tensor<f32>
  %count = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%y : tensor<2xf32>) outs(%c1 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %e2 = tensor.empty() : tensor<2xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%y, %count : tensor<2xf32>, tensor<f32>) outs(%e2 : tensor<2xf32>) {
  ^bb0(%a: f32, %n: f32, %o: f32):
    %t = arith.divf %a, %n : f32
    linalg.yield %t : f32
  } -> tensor<2xf32>
  return %r, %scaled : tensor<2x8x4xf32>, tensor<2xf32>
}

// -----

func.func @two_masks(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %m1: tensor<2x8xi1> {wsc.input = 1 : i64},
                     %m2: tensor<2x8xi1> {wsc.input = 2 : i64}) -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
  // expected-note @-2 {{the first mask}}
  %s = wsc.strip_padding %x, %m1 : tensor<2x8x4xf32>, tensor<2x8xi1>
  // expected-error @+1 {{uses a second padding mask; wsc supports one mask per program}}
  %t = wsc.strip_padding %s, %m2 : tensor<2x8x4xf32>, tensor<2x8xi1>
  return %t : tensor<2x8x4xf32>
}

// -----

// expected-error @+1 {{wsc.restore_padding without a wsc.strip_padding}}
func.func @restore_only(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %m: tensor<2x8xi1> {wsc.input = 1 : i64})
    -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
  %r = wsc.restore_padding %x, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
  return %r : tensor<2x8x4xf32>
}

// -----

func.func @not_batch(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %m: tensor<2x8xi1> {wsc.input = 1 : i64})
    -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
  %c = arith.constant dense<1.0> : tensor<8x8x4xf32>
  %e = tensor.empty() : tensor<8x8xi1>
  // expected-error @+1 {{strips a tensor whose dim 0 is not the batch}}
  %s = wsc.strip_padding %c, %e : tensor<8x8x4xf32>, tensor<8x8xi1>
  return %x : tensor<2x8x4xf32>
}

// -----

// expected-error @+1 {{wsc-vts runs before wsc-form-kernels}}
func.func @formed(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %m: tensor<2x8xi1> {wsc.input = 1 : i64})
    -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
  %s = wsc.strip_padding %x, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
  %k = wsc.kernel "k.fwd" layer("k") phase(<forward>) (%s) : (tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  ^bb0(%a: tensor<2x8x4xf32>):
    wsc.yield %a : tensor<2x8x4xf32>
  }
  return %k : tensor<2x8x4xf32>
}

// -----

// An op that already passed ragged facts on and then meets a ragged operand
// it reads through a compound index cannot become a boundary any more.
func.func @late_conflict(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %y: tensor<2x8xf32> {wsc.input = 1 : i64},
                         %mask: tensor<2x8xi1> {wsc.input = 2 : i64}) -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
  %s = wsc.strip_padding %x, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %e = tensor.empty() : tensor<2x8x4xf32>
  // expected-error @+1 {{cannot run on valid tokens only: it indexes a ragged dim with a compound expression (and it already shares ragged tensors with other ops; place a wsc.restore_padding before it)}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2 * 2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %y : tensor<2x8x4xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %e2 = tensor.empty() : tensor<2x8x4xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y, %r : tensor<2x8xf32>, tensor<2x8x4xf32>) outs(%e2 : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  return %r2 : tensor<2x8x4xf32>
}

// -----

// A result ragged in two dims (attention scores) cannot be restored (a
// restore repads one sequence dim): its producer becomes a boundary, and
// with nothing left to run ragged the program stays dense.
// CHECK-LABEL: func.func @scores_out
// CHECK-NOT: wsc.strip_padding
// CHECK: return
func.func @scores_out(%q: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %mask: tensor<2x8xi1> {wsc.input = 1 : i64})
    -> (tensor<2x8x8xf32> {wsc.output = 0 : i64}) {
  // expected-remark @-2 {{VTS: 0% of the step's work runs on valid tokens only, between 0 strip_padding and 0 restore_padding ops}}
  %s = wsc.strip_padding %q, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (b, j, k)>, affine_map<(b, i, j, k) -> (b, i, j)>],
                        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s, %s : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%f : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  return %sc : tensor<2x8x8xf32>
}
