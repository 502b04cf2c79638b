// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-form-kernels --wsc-lower-weight-streaming | FileCheck %s
// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-attach-target=stream-dtype=f32 --wsc-form-kernels --wsc-lower-weight-streaming | FileCheck %s --check-prefix=F32
// RUN: wsc-opt %s --wsc-lower-weight-streaming -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=SPLIT
// RUN: wsc-opt %S/Inputs/mlp-sparse-train.mlir --wsc-form-kernels --wsc-lower-weight-streaming | FileCheck %s --check-prefix=SPARSE
// RUN: wsc-opt %S/Inputs/mlp-sparse-train.mlir --wsc-attach-target=stream-dtype=f32 --wsc-form-kernels --wsc-lower-weight-streaming | FileCheck %s --check-prefix=SPARSE32

// Parameters become MemoryX symbols with their optimizer; the function keeps
// only inputs, labels and the loss.
// CHECK: wsc.memx.param @"0.weight" : tensor<3x4xf32> optimizer(<sgd, lr = 5.000000e-01>)
// CHECK: wsc.memx.param @"2.weight" : tensor<2x3xf32> optimizer(<sgd, lr = 5.000000e-01>)
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32> {wsc.input = 0 : i64}, %[[Y:.*]]: tensor<8x2xf32> {wsc.label = 0 : i64}) -> (tensor<f32> {wsc.loss})
// Nothing takes SRAM here (no layouts yet), so every stream is issued at
// the start, in the order of its kernels: prefetches. The backward stream
// is transposed; the body transposes it back.
// CHECK: %[[S0:.*]] = wsc.memx.stream @"0.weight" order(<row_major>) : <tensor<3x4xf16>>
// CHECK-NEXT: %[[B0:.*]] = wsc.swarmx.broadcast %[[S0]]
// CHECK-NEXT: %[[S2:.*]] = wsc.memx.stream @"2.weight" order(<row_major>) : <tensor<2x3xf16>>
// CHECK-NEXT: %[[B2:.*]] = wsc.swarmx.broadcast %[[S2]]
// CHECK-NEXT: %[[T2:.*]] = wsc.memx.stream @"2.weight" order(<transposed>) : <tensor<3x2xf16>>
// CHECK-NEXT: %[[TB2:.*]] = wsc.swarmx.broadcast %[[T2]]
// CHECK-NEXT: %[[H:.*]] = wsc.kernel "0.fwd" {{.*}}(%[[X]], %[[B0]])
// CHECK: wsc.kernel "2.fwd" {{.*}}(%[[H]], %[[B2]])
// CHECK: wsc.kernel "loss"
// CHECK: %[[G2:.*]]:2 = wsc.kernel "2.bwd" {{.*}}%[[TB2]]
// CHECK-NEXT: ^bb0({{.*}}: tensor<3x2xf32>
// CHECK: linalg.transpose
// Gradients are summed by SwarmX and applied by MemoryX right away.
// CHECK: %[[R2:.*]] = wsc.swarmx.reduce %[[G2]]#{{[01]}} order(<row_major>) : tensor<2x3xf32> -> <tensor<2x3xf32>>
// CHECK-NEXT: wsc.memx.update @"2.weight"(%[[R2]])
// CHECK: %[[G0:.*]] = wsc.kernel "0.bwd"
// CHECK: %[[R0:.*]] = wsc.swarmx.reduce %[[G0]]
// CHECK-NEXT: wsc.memx.update @"0.weight"(%[[R0]])
// CHECK: return {{.*}} : tensor<f32>

// F32: wsc.memx.stream @"0.weight" order(<row_major>) : <tensor<3x4xf32>>

// Sparse parameters keep their sparsity in MemoryX. 0.weight (10.4% dense)
// streams as CSR; 2.weight (92.2%) would cost more as CSR than dense, so it
// streams dense. Both gradients come back in mask order.
// SPARSE: wsc.memx.param @"0.weight" : tensor<64x64xf32> optimizer({{.*}}) sparsity(<density = 1.040000e-01, source = "explicit">)
// SPARSE: wsc.memx.param @"0.bias" : tensor<64xf32> optimizer({{.*}}){{$}}
// SPARSE: wsc.memx.param @"2.weight" : tensor<10x64xf32> optimizer({{.*}}) sparsity(<density = 9.220000e-01, source = "explicit">)
// SPARSE-LABEL: func.func @train_step
// SPARSE: wsc.memx.stream @"0.weight" order(<row_major>) format(<csr>) : <tensor<64x64xf16>>
// SPARSE: wsc.memx.stream @"0.bias" order(<row_major>) : <tensor<64xf16>>
// SPARSE: wsc.memx.stream @"2.weight" order(<row_major>) : <tensor<10x64xf16>>
// SPARSE: wsc.memx.stream @"2.weight" order(<transposed>) : <tensor<64x10xf16>>
// SPARSE: wsc.memx.update @"2.weight"(%{{.*}}) format(<mask>)
// SPARSE: wsc.memx.update @"2.bias"(%{{.*}}) :
// SPARSE: wsc.memx.update @"0.weight"(%{{.*}}) format(<mask>)
// SPARSE: wsc.memx.update @"0.bias"(%{{.*}}) :

// FP32 values make an entry 6 bytes against 4 dense: still CSR at 10.4%.
// SPARSE32: wsc.memx.stream @"0.weight" order(<row_major>) format(<csr>) : <tensor<64x64xf32>>

// -----

// expected-error @+1 {{training module has no 'wsc.optimizer' attribute}}
module {
  func.func @f(%w: tensor<2xf32> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

// expected-error @+1 {{wsc.optimizer: unknown optimizer "lion"}}
module attributes {wsc.optimizer = {name = "lion"}} {
  func.func @f(%w: tensor<2xf32> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

// expected-error @+1 {{wsc.optimizer: unknown field 'betas'}}
module attributes {wsc.optimizer = {name = "adam", betas = 0.9 : f64}} {
  func.func @f(%w: tensor<2xf32> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

// expected-error @+1 {{sgd nesterov requires momentum > 0 and dampening = 0}}
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64, nesterov = true}} {
  func.func @f(%w: tensor<2xf32> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  func.func @f(%w: tensor<2xf32> {wsc.param = "w"}) -> (tensor<2xf32> {wsc.output = 0 : i64}, tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    // expected-error @+1 {{uses parameter 'w' outside a kernel; run wsc-form-kernels first}}
    return %w, %c : tensor<2xf32>, tensor<f32>
  }
}

// -----

// expected-error @+1 {{wsc.optimizer: 'lr' must be a float}}
module attributes {wsc.optimizer = {name = "sgd", lr = 1 : i64}} {
  func.func @f(%w: tensor<2xf32> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

// expected-error @+1 {{wsc.optimizer: 'amsgrad' must be true or false}}
module attributes {wsc.optimizer = {name = "adam", amsgrad = 1.0 : f64}} {
  func.func @f(%w: tensor<2xf32> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

module attributes {wsc.optimizer = {name = "sgd"}} {
  // expected-error @+1 {{parameter 'w' must be a static f32 tensor, got 'tensor<2xf64>'}}
  func.func @f(%w: tensor<2xf64> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

module attributes {wsc.optimizer = {name = "sgd"}} {
  // expected-error @+1 {{parameter 'w' declared twice}}
  func.func @f(%w: tensor<2xf32> {wsc.param = "w"}, %v: tensor<2xf32> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

module attributes {wsc.optimizer = {name = "sgd"}} {
  // expected-error @+1 {{gradient of 'w' is not produced by a kernel}}
  func.func @f(%w: tensor<2xf32> {wsc.param = "w"}, %g: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<2xf32> {wsc.grad = "w"}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c, %g : tensor<f32>, tensor<2xf32>
  }
}

// -----

// Two gradients from one kernel leave in result order.
// SPLIT-LABEL: func.func @two_grads
// SPLIT: %[[G:.*]]:3 = wsc.kernel "fc.bwd"
// SPLIT-NEXT: ^bb0
// SPLIT: wsc.swarmx.reduce %[[G]]#1
// SPLIT-NEXT: wsc.memx.update @fc.weight
// SPLIT-NEXT: wsc.swarmx.reduce %[[G]]#2
// SPLIT-NEXT: wsc.memx.update @fc.bias
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  func.func @two_grads(%w: tensor<2x2xf32> {wsc.param = "fc.weight"}, %b: tensor<2xf32> {wsc.param = "fc.bias"}, %x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<2x2xf32> {wsc.grad = "fc.weight"}, tensor<2xf32> {wsc.grad = "fc.bias"}) {
    %g:3 = wsc.kernel "fc.bwd" layer("fc") phase(<backward>) (%x) : (tensor<4x2xf32>) -> (tensor<f32>, tensor<2x2xf32>, tensor<2xf32>) {
    ^bb0(%a: tensor<4x2xf32>):
      %l = tensor.empty() : tensor<f32>
      %gw = tensor.empty() : tensor<2x2xf32>
      %gb = tensor.empty() : tensor<2xf32>
      wsc.yield %l, %gw, %gb : tensor<f32>, tensor<2x2xf32>, tensor<2xf32>
    }
    return %g#0, %g#1, %g#2 : tensor<f32>, tensor<2x2xf32>, tensor<2xf32>
  }
}

// -----

// A weight's gradient made before the weight's last use (a Linear over
// parameters only: its weight gradient comes before its input gradient)
// leaves after the kernel of that use: MemoryX updates the weight as soon
// as the gradient arrives, and "in.grad" still streams it.
// SPLIT-LABEL: func.func @gradient_before_last_use
// SPLIT: wsc.memx.stream @w
// SPLIT: %[[G:.*]] = wsc.kernel "w.grad"
// SPLIT-NOT: wsc.memx.update
// SPLIT: wsc.kernel "in.grad"
// SPLIT: wsc.yield
// SPLIT: wsc.swarmx.reduce %[[G]]
// SPLIT-NEXT: wsc.memx.update @w
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  func.func @gradient_before_last_use(%w: tensor<2x2xf32> {wsc.param = "w"}, %x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<2x2xf32> {wsc.grad = "w"}) {
    %gw = wsc.kernel "w.grad" layer("w") phase(<backward>) (%x) : (tensor<4x2xf32>) -> tensor<2x2xf32> {
    ^bb0(%a: tensor<4x2xf32>):
      %e = tensor.empty() : tensor<2x2xf32>
      wsc.yield %e : tensor<2x2xf32>
    }
    %l = wsc.kernel "in.grad" layer("w") phase(<backward>) (%x, %w) : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<4x2xf32>, %v: tensor<2x2xf32>):
      %e = tensor.empty() : tensor<f32>
      wsc.yield %e : tensor<f32>
    }
    return %l, %gw : tensor<f32>, tensor<2x2xf32>
  }
}

// -----

// Centring by the batch mean: on several systems each would subtract the
// mean of its own shard only.
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}, wsc.target = #wsc.target<systems = 2>} {
  func.func @batch_mean(%x: tensor<8x3xf32> {wsc.input = 0 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
    %y = wsc.kernel "centre" layer("centre") phase(<forward>) (%x) : (tensor<8x3xf32>) -> tensor<8x3xf32> {
    ^bb0(%a: tensor<8x3xf32>):
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<3xf32>
      %f = linalg.fill ins(%z : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
      // expected-note @+1 {{the sum over the batch}}
      %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<8x3xf32>) outs(%f : tensor<3xf32>) {
      ^bb0(%in: f32, %acc: f32):
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      } -> tensor<3xf32>
      %o = tensor.empty() : tensor<8x3xf32>
      // expected-error @+1 {{'linalg.generic' op combines a sum over the batch with per-sample values; each of the 2 systems sums only its own shard, so this would differ from single-device training; run wsc-sync-batch-statistics first (--wsc-pipeline does)}}
      %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %s : tensor<8x3xf32>, tensor<3xf32>) outs(%o : tensor<8x3xf32>) {
      ^bb0(%in: f32, %m: f32, %out: f32):
        %r = arith.subf %in, %m : f32
        linalg.yield %r : f32
      } -> tensor<8x3xf32>
      wsc.yield %c : tensor<8x3xf32>
    }
    return %y : tensor<8x3xf32>
  }
}

// -----

// A weight gradient is a sum over the batch too, but SwarmX sums it: fine.
// SPLIT-LABEL: func.func @weight_gradient
// SPLIT: wsc.swarmx.reduce
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}, wsc.target = #wsc.target<systems = 2>} {
  func.func @weight_gradient(%w: tensor<3xf32> {wsc.param = "w"}, %x: tensor<8x3xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<3xf32> {wsc.grad = "w"}) {
    %l, %g = wsc.kernel "w.bwd" layer("w") phase(<backward>) (%x, %w) : (tensor<8x3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
    ^bb0(%a: tensor<8x3xf32>, %b: tensor<3xf32>):
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<3xf32>
      %f = linalg.fill ins(%z : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
      %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<8x3xf32>) outs(%f : tensor<3xf32>) {
      ^bb0(%in: f32, %acc: f32):
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      } -> tensor<3xf32>
      %e0 = tensor.empty() : tensor<f32>
      %l0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
      wsc.yield %l0, %s : tensor<f32>, tensor<3xf32>
    }
    return %l, %g : tensor<f32>, tensor<3xf32>
  }
}

// -----

module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  // expected-error @+1 {{wsc.sparsity: expected {density = <float>, source = <string>}, got {density = 1.000000e-01 : f64}}}
  func.func @f(%w: tensor<2x2xf32> {wsc.param = "w", wsc.sparsity = {density = 0.1 : f64}}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  // expected-error @+1 {{wsc.sparsity: sparsity needs a 2-D parameter, got rank 1}}
  func.func @f(%w: tensor<2xf32> {wsc.param = "w", wsc.sparsity = {density = 0.5 : f64, source = "explicit"}}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  // expected-error @+1 {{wsc.sparsity: density must be in (0, 1], got 2}}
  func.func @f(%w: tensor<2x2xf32> {wsc.param = "w", wsc.sparsity = {density = 2.0 : f64, source = "explicit"}}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

// Found by scripts/mutation-fuzz.py: density 0 was accepted and wsc-run
// refused the schedule (a parameter with no weight left).
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  // expected-error @+1 {{wsc.sparsity: density must be in (0, 1], got 0}}
  func.func @f(%w: tensor<2x2xf32> {wsc.param = "w", wsc.sparsity = {density = 0.0 : f64, source = "explicit"}}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

// Buffers: declared in MemoryX, streamed to each kernel in their own type
// (an i64 counter arrives as i64), and replaced after the step by the
// value the kernel computed.
// SPLIT-LABEL: wsc.memx.buffer @bn.running_mean : tensor<2xf32>
// SPLIT: wsc.memx.buffer @bn.num_batches_tracked : tensor<i64>
// SPLIT-LABEL: func.func @buffers
// SPLIT-SAME: (%arg0: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64})
// The all-reduce's total comes on the link: bn.fwd.1's streams are issued
// after it, not before bn.fwd, so that it does not queue behind them.
// SPLIT: %[[N:.*]] = wsc.memx.stream @bn.num_batches_tracked order(<row_major>) : <tensor<i64>>
// SPLIT: %[[NB:.*]] = wsc.swarmx.broadcast %[[N]] : <tensor<i64>>
// SPLIT: %[[K:.*]]:2 = wsc.kernel "bn.fwd" layer("bn") phase(<forward>) (%arg0, %[[NB]])
// SPLIT-NEXT: ^bb0(%{{.*}}: tensor<4x2xf32>, %{{.*}}: tensor<i64>):
// SPLIT: wsc.memx.assign @bn.num_batches_tracked(%[[K]]#1) : tensor<i64>
// SPLIT-NEXT: wsc.swarmx.all_reduce
// SPLIT: %[[M:.*]] = wsc.memx.stream @bn.running_mean order(<row_major>) : <tensor<2xf32>>
// SPLIT: %[[MB:.*]] = wsc.swarmx.broadcast %[[M]] : <tensor<2xf32>>
// SPLIT: %[[L:.*]]:2 = wsc.kernel "bn.fwd.1" {{.*}}, %[[MB]])
// SPLIT: wsc.memx.assign @bn.running_mean(%[[L]]#1) : tensor<2xf32>
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
#map2 = affine_map<() -> ()>
#map3 = affine_map<(d0) -> (d0)>
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}, wsc.target = #wsc.target<systems = 2>} {
  func.func @buffers(%arg0: tensor<2xf32> {wsc.param = "bn.weight"}, %arg1: tensor<2xf32> {wsc.buffer = "bn.running_mean"}, %arg2: tensor<i64> {wsc.buffer = "bn.num_batches_tracked"}, %arg3: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}, tensor<2xf32> {wsc.buffer_update = "bn.running_mean"}, tensor<i64> {wsc.buffer_update = "bn.num_batches_tracked"}) {
    %0:2 = wsc.kernel "bn.fwd" layer("bn") phase(<forward>) (%arg3, %arg2) : (tensor<4x2xf32>, tensor<i64>) -> (tensor<2xf32>, tensor<i64>) {
    ^bb0(%arg4: tensor<4x2xf32>, %arg5: tensor<i64>):
      %cst = arith.constant 0.000000e+00 : f32
      %3 = tensor.empty() : tensor<2xf32>
      %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2xf32>) -> tensor<2xf32>
      %5 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "parallel"]} ins(%arg4 : tensor<4x2xf32>) outs(%4 : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %8 = arith.addf %in, %out : f32
        linalg.yield %8 : f32
      } -> tensor<2xf32>
      %c1_i64 = arith.constant 1 : i64
      %6 = tensor.empty() : tensor<i64>
      %7 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%arg5 : tensor<i64>) outs(%6 : tensor<i64>) {
      ^bb0(%in: i64, %out: i64):
        %8 = arith.addi %in, %c1_i64 : i64
        linalg.yield %8 : i64
      } -> tensor<i64>
      wsc.yield %5, %7 : tensor<2xf32>, tensor<i64>
    }
    %1 = wsc.swarmx.all_reduce %0#0 : tensor<2xf32>
    %2:2 = wsc.kernel "bn.fwd.1" layer("bn") phase(<forward>) (%arg3, %1, %arg0, %arg1) : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>) {
    ^bb0(%arg4: tensor<4x2xf32>, %arg5: tensor<2xf32>, %arg6: tensor<2xf32>, %arg7: tensor<2xf32>):
      %3 = tensor.empty() : tensor<4x2xf32>
      %4 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg4, %arg5, %arg6 : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) outs(%3 : tensor<4x2xf32>) {
      ^bb0(%in: f32, %in_0: f32, %in_1: f32, %out: f32):
        %7 = arith.subf %in, %in_0 : f32
        %8 = arith.mulf %7, %in_1 : f32
        linalg.yield %8 : f32
      } -> tensor<4x2xf32>
      %5 = tensor.empty() : tensor<2xf32>
      %6 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel"]} ins(%arg7, %arg5 : tensor<2xf32>, tensor<2xf32>) outs(%5 : tensor<2xf32>) {
      ^bb0(%in: f32, %in_0: f32, %out: f32):
        %7 = arith.addf %in, %in_0 : f32
        linalg.yield %7 : f32
      } -> tensor<2xf32>
      wsc.yield %4, %6 : tensor<4x2xf32>, tensor<2xf32>
    }
    return %2#0, %2#1, %0#1 : tensor<4x2xf32>, tensor<2xf32>, tensor<i64>
  }
}


// -----

module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  // expected-error @+1 {{buffer 'bn.running_mean' must be a static f32, i64 or i1 tensor, got 'tensor<2xf16>'}}
  func.func @f(%m: tensor<2xf16> {wsc.buffer = "bn.running_mean"}, %x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2xf32>
  }
}

// -----

module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  // expected-error @+1 {{update of 'bn.running_mean' is not produced by a kernel}}
  func.func @f(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.buffer_update = "bn.running_mean"}) {
    return %x : tensor<2xf32>
  }
}

// -----

module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  // expected-error @+1 {{buffer 'm' declared twice}}
  func.func @f(%m: tensor<2xf32> {wsc.buffer = "m"}, %n: tensor<2xf32> {wsc.buffer = "m"}, %x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2xf32>
  }
}

// -----

// An embedding table's gradient (a one-hot scatter of the batch's token
// ids into its rows) leaves as rows: 4 tokens of a 64-row table.
// SPLIT-LABEL: func.func @embedding
// SPLIT: wsc.memx.update @tok.weight(%{{.*}}) format(<rows>) : <tensor<64x8xf32>>
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  func.func @embedding(%w: tensor<64x8xf32> {wsc.param = "tok.weight"}, %ids: tensor<4xi64> {wsc.input = 0 : i64}, %dy: tensor<4x8xf32> {wsc.label = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<64x8xf32> {wsc.grad = "tok.weight"}) {
    %0:2 = wsc.kernel "tok.bwd" layer("tok") phase(<backward>) (%ids, %dy, %w) : (tensor<4xi64>, tensor<4x8xf32>, tensor<64x8xf32>) -> (tensor<f32>, tensor<64x8xf32>) {
    ^bb0(%i: tensor<4xi64>, %g: tensor<4x8xf32>, %t: tensor<64x8xf32>):
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<64x8xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x8xf32>) -> tensor<64x8xf32>
      %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%i, %g : tensor<4xi64>, tensor<4x8xf32>) outs(%f : tensor<64x8xf32>) {
      ^bb0(%id: i64, %v: f32, %acc: f32):
        %row = linalg.index 0 : index
        %r64 = arith.index_cast %row : index to i64
        %hit = arith.cmpi eq, %id, %r64 : i64
        %x = arith.select %hit, %v, %zero : f32
        %r = arith.addf %acc, %x : f32
        linalg.yield %r : f32
      } -> tensor<64x8xf32>
      %l = arith.constant dense<0.0> : tensor<f32>
      wsc.yield %l, %s : tensor<f32>, tensor<64x8xf32>
    }
    return %0#0, %0#1 : tensor<f32>, tensor<64x8xf32>
  }
}

// -----

// An imported parameter's value moves to its MemoryX declaration.
// SPLIT: wsc.memx.param @w : tensor<2xf32> optimizer(<sgd, lr = 0.000000e+00>) initial_value(dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>)
// SPLIT-LABEL: func.func @imported
module attributes {wsc.target = #wsc.target<grid_x = 16, grid_y = 16>} {
  func.func @imported(%w: tensor<2xf32> {wsc.param = "w", wsc.initial_value = dense<[1.0, 2.0]> : tensor<2xf32>}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "w.fwd" layer("w") phase(<forward>) (%w) : (tensor<2xf32>) -> tensor<2xf32> {
    ^bb0(%a: tensor<2xf32>):
      wsc.yield %a : tensor<2xf32>
    }
    return %0 : tensor<2xf32>
  }
}

// -----

module attributes {wsc.target = #wsc.target<grid_x = 16, grid_y = 16>} {
  // expected-error @+1 {{parameter 'w': wsc.initial_value must be elements of type 'tensor<2xf32>', got dense<1.000000e+00> : tensor<3xf32>}}
  func.func @imported(%w: tensor<2xf32> {wsc.param = "w", wsc.initial_value = dense<1.0> : tensor<3xf32>}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    %0 = wsc.kernel "w.fwd" layer("w") phase(<forward>) (%w) : (tensor<2xf32>) -> tensor<2xf32> {
    ^bb0(%a: tensor<2xf32>):
      wsc.yield %a : tensor<2xf32>
    }
    return %0 : tensor<2xf32>
  }
}

// -----

// A parameter the step writes in place (nn.Embedding's max_norm renorm)
// comes back as its new value: MemoryX replaces the master copy after the
// kernel that computes it, before the gradient updates it.
// SPLIT-LABEL: func.func @parameter_written_in_place
// SPLIT: %[[K:.*]]:2 = wsc.kernel "emb.fwd"
// SPLIT-NEXT: ^bb0
// SPLIT: wsc.memx.assign @emb.weight(%[[K]]#1) : tensor<4x2xf32>
// SPLIT: wsc.memx.update @emb.weight
#map = affine_map<(d0, d1) -> (d0, d1)>
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}, wsc.target = #wsc.target<weight_dtype = f32>} {
  func.func @parameter_written_in_place(%w: tensor<4x2xf32> {wsc.param = "emb.weight"}, %x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<4x2xf32> {wsc.grad = "emb.weight"}, tensor<4x2xf32> {wsc.buffer_update = "emb.weight"}) {
    %0:2 = wsc.kernel "emb.fwd" layer("emb") phase(<forward>) (%w, %x) : (tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<f32>, tensor<4x2xf32>) {
    ^bb0(%a: tensor<4x2xf32>, %b: tensor<4x2xf32>):
      %e = tensor.empty() : tensor<4x2xf32>
      %s = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e : tensor<4x2xf32>) {
      ^bb0(%in: f32, %in_0: f32, %out: f32):
        %m = arith.mulf %in, %in_0 : f32
        linalg.yield %m : f32
      } -> tensor<4x2xf32>
      %cst = arith.constant 0.000000e+00 : f32
      %l = tensor.empty() : tensor<f32>
      %z = linalg.fill ins(%cst : f32) outs(%l : tensor<f32>) -> tensor<f32>
      %r = linalg.generic {indexing_maps = [#map, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%s : tensor<4x2xf32>) outs(%z : tensor<f32>) {
      ^bb0(%in: f32, %out: f32):
        %t = arith.addf %in, %out : f32
        linalg.yield %t : f32
      } -> tensor<f32>
      wsc.yield %r, %s : tensor<f32>, tensor<4x2xf32>
    }
    %1 = wsc.kernel "emb.bwd" layer("emb") phase(<backward>) (%x) : (tensor<4x2xf32>) -> tensor<4x2xf32> {
    ^bb0(%b: tensor<4x2xf32>):
      wsc.yield %b : tensor<4x2xf32>
    }
    return %0#0, %1, %0#1 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
  }
}

// -----

// The forward pass and the backward pass each stream the weights in. A
// recomputed forward kernel (wsc.recompute) runs in the backward pass,
// right before the backward kernel that reads the same weight: the two
// share one stream, which waits on the wafer in between (16 f16 over 2x2
// PEs: 8 of the 8 bytes per PE free).
// SPLIT-LABEL: func.func @recompute_shares
// SPLIT: %[[F:.*]] = wsc.memx.stream @g order(<row_major>) : <tensor<16xf16>>
// SPLIT: %[[FB:.*]] = wsc.swarmx.broadcast %[[F]]
// SPLIT: wsc.kernel "norm.fwd" {{.*}}(%arg0, %[[FB]])
// SPLIT: %[[R:.*]] = wsc.memx.stream @g order(<row_major>) : <tensor<16xf16>>
// SPLIT: %[[RB:.*]] = wsc.swarmx.broadcast %[[R]]
// SPLIT: wsc.kernel "norm.fwd.recompute" {{.*}}(%arg0, %[[RB]])
// SPLIT-NOT: wsc.memx.stream
// SPLIT: wsc.kernel "norm.bwd" {{.*}}(%arg0, %[[RB]])
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}, wsc.target = #wsc.target<grid_x = 2, grid_y = 2, sram_per_pe = 8>} {
  func.func @recompute_shares(%x: tensor<4x16xf32> {wsc.input = 0 : i64}, %g: tensor<16xf32> {wsc.param = "g"}) -> (tensor<f32> {wsc.loss}) {
    %y = wsc.kernel "norm.fwd" layer("norm") phase(<forward>) (%x, %g) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<4x16xf32>, %v: tensor<16xf32>):
      %e = tensor.empty() : tensor<f32>
      wsc.yield %e : tensor<f32>
    }
    %r = wsc.kernel "norm.fwd.recompute" layer("norm") phase(<forward>) (%x, %g) {wsc.recompute = "norm.fwd"} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<4x16xf32>, %v: tensor<16xf32>):
      %e = tensor.empty() : tensor<f32>
      wsc.yield %e : tensor<f32>
    }
    %l = wsc.kernel "norm.bwd" layer("norm") phase(<backward>) (%x, %g) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<4x16xf32>, %v: tensor<16xf32>):
      %e = tensor.empty() : tensor<f32>
      wsc.yield %e : tensor<f32>
    }
    return %l : tensor<f32>
  }
}

// -----

// Not shared: a weight that cannot wait (24 f16 over 2x2 PEs: 12 bytes
// per PE, 8 free), and a 2-D weight the backward kernel reads transposed
// while the recomputed kernel reads it row-major (the emulator's
// contractions round W and W^T differently; a recomputed step trains
// bitwise as the stored one).
// SPLIT-LABEL: func.func @recompute_cannot_share
// SPLIT: wsc.memx.stream @g order(<row_major>) : <tensor<24xf16>>
// SPLIT: wsc.memx.stream @w order(<row_major>) : <tensor<2x2xf16>>
// SPLIT: wsc.kernel "fc.fwd.recompute"
// SPLIT: %[[G:.*]] = wsc.memx.stream @g order(<row_major>) : <tensor<24xf16>>
// SPLIT: %[[GB:.*]] = wsc.swarmx.broadcast %[[G]]
// SPLIT: %[[T:.*]] = wsc.memx.stream @w order(<transposed>) : <tensor<2x2xf16>>
// SPLIT: %[[TB:.*]] = wsc.swarmx.broadcast %[[T]]
// SPLIT: wsc.kernel "fc.bwd" {{.*}}(%arg0, %[[GB]], %[[TB]])
// SPLIT: linalg.transpose
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64}, wsc.target = #wsc.target<grid_x = 2, grid_y = 2, sram_per_pe = 8>} {
  func.func @recompute_cannot_share(%x: tensor<4x4xf32> {wsc.input = 0 : i64}, %g: tensor<24xf32> {wsc.param = "g"}, %w: tensor<2x2xf32> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
    %r = wsc.kernel "fc.fwd.recompute" layer("fc") phase(<forward>) (%x, %g, %w) {wsc.recompute = "fc.fwd"} : (tensor<4x4xf32>, tensor<24xf32>, tensor<2x2xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<4x4xf32>, %v: tensor<24xf32>, %u: tensor<2x2xf32>):
      %e = tensor.empty() : tensor<f32>
      wsc.yield %e : tensor<f32>
    }
    %l = wsc.kernel "fc.bwd" layer("fc") phase(<backward>) (%x, %g, %w) : (tensor<4x4xf32>, tensor<24xf32>, tensor<2x2xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<4x4xf32>, %v: tensor<24xf32>, %u: tensor<2x2xf32>):
      %e = tensor.empty() : tensor<f32>
      wsc.yield %e : tensor<f32>
    }
    return %l : tensor<f32>
  }
}
