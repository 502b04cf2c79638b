// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-form-kernels --wsc-select-mode=mode=layer_pipelined --wsc-lower-layer-pipelined 2>/dev/null | FileCheck %s
// RUN: wsc-opt %s --wsc-lower-layer-pipelined -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=SPLIT

// Parameters become resident wafer symbols with their optimizer; kernels
// read them in place, in their own order (no transposed copy), and each
// gradient updates its parameter right after the kernel producing it.
// CHECK: wsc.wafer.param @"0.weight" : tensor<3x4xf32> optimizer(<sgd, lr = 5.000000e-01>)
// CHECK: wsc.wafer.param @"2.weight" : tensor<2x3xf32> optimizer(<sgd, lr = 5.000000e-01>)
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32> {wsc.input = 0 : i64}, %{{.*}}: tensor<8x2xf32> {wsc.label = 0 : i64}) -> (tensor<f32> {wsc.loss})
// CHECK: %[[W0:.*]] = wsc.wafer.weight @"0.weight" : tensor<3x4xf32>
// CHECK-NEXT: %[[H:.*]] = wsc.kernel "0.fwd" {{.*}}(%[[X]], %[[W0]])
// CHECK: %[[W2:.*]] = wsc.wafer.weight @"2.weight" : tensor<2x3xf32>
// CHECK-NEXT: wsc.kernel "2.fwd" {{.*}}(%[[H]], %[[W2]])
// CHECK: wsc.kernel "loss"
// CHECK: %[[W2B:.*]] = wsc.wafer.weight @"2.weight" : tensor<2x3xf32>
// CHECK-NEXT: %[[G2:.*]]:2 = wsc.kernel "2.bwd" {{.*}}%[[W2B]]) : {{.*}}tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<8x3xf32>)
// CHECK-NOT: linalg.transpose ins(%arg
// CHECK: wsc.wafer.update @"2.weight"(%[[G2]]#0) : tensor<2x3xf32>
// CHECK: %[[G0:.*]] = wsc.kernel "0.bwd"
// CHECK: wsc.wafer.update @"0.weight"(%[[G0]]) : tensor<3x4xf32>
// CHECK: return {{.*}} : tensor<f32>
// CHECK-NOT: memx
// CHECK-NOT: swarmx

// -----

// A weight-streaming module is left for wsc-lower-weight-streaming.
// SPLIT-LABEL: func.func @streamed
// SPLIT-SAME: wsc.param = "w"
// SPLIT-NOT: wsc.wafer
module attributes {wsc.mode = #wsc.mode<weight_streaming>, wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  func.func @streamed(%w: tensor<2xf32> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

// expected-error @+1 {{training module has no 'wsc.optimizer' attribute}}
module attributes {wsc.mode = #wsc.mode<layer_pipelined>} {
  func.func @f(%w: tensor<2xf32> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<layer_pipelined>, wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  func.func @f(%w: tensor<2xf32> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}, tensor<2xf32> {wsc.grad = "w"}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    // expected-error @+1 {{'arith.addf' op uses 'w' outside a kernel; run wsc-form-kernels first}}
    %g = arith.addf %w, %w : tensor<2xf32>
    return %c, %g : tensor<f32>, tensor<2xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<layer_pipelined>, wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  // expected-error @+1 {{parameter 'w' must be a static f32 tensor, got 'tensor<2xf16>'}}
  func.func @f(%w: tensor<2xf16> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<layer_pipelined>, wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  // expected-error @+1 {{gradient of 'w' is not produced by a kernel}}
  func.func @f(%w: tensor<2xf32> {wsc.param = "w"}, %x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<2xf32> {wsc.grad = "w"}) {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c, %x : tensor<f32>, tensor<2xf32>
  }
}

// -----

// Buffers (BatchNorm's running statistics) are resident too: declared on
// the wafer in their own element type, read in place by the kernels that
// use them, and replaced in place by the step's new value.
// SPLIT: wsc.wafer.buffer @bn.running_mean : tensor<2xf32>
// SPLIT-NEXT: wsc.wafer.buffer @bn.num_batches_tracked : tensor<i64>
// SPLIT-LABEL: func.func @buffers
// SPLIT-SAME: (%{{.*}}: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64})
// SPLIT: %[[M:.*]] = wsc.wafer.weight @bn.running_mean : tensor<2xf32>
// SPLIT: %[[N:.*]] = wsc.wafer.weight @bn.num_batches_tracked : tensor<i64>
// SPLIT: %[[K:.*]]:3 = wsc.kernel "bn.fwd" {{.*}}(%{{.*}}, %[[M]], %[[N]])
// SPLIT: wsc.wafer.assign @bn.running_mean(%[[K]]#1) : tensor<2xf32>
// SPLIT-NEXT: wsc.wafer.assign @bn.num_batches_tracked(%[[K]]#2) : tensor<i64>
module attributes {wsc.mode = #wsc.mode<layer_pipelined>, wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  func.func @buffers(%m: tensor<2xf32> {wsc.buffer = "bn.running_mean"}, %n: tensor<i64> {wsc.buffer = "bn.num_batches_tracked"}, %x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}, tensor<2xf32> {wsc.buffer_update = "bn.running_mean"}, tensor<i64> {wsc.buffer_update = "bn.num_batches_tracked"}) {
    %y:3 = wsc.kernel "bn.fwd" layer("bn") phase(<forward>) (%x, %m, %n) : (tensor<4x2xf32>, tensor<2xf32>, tensor<i64>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<i64>) {
    ^bb0(%a: tensor<4x2xf32>, %b: tensor<2xf32>, %c: tensor<i64>):
      wsc.yield %a, %b, %c : tensor<4x2xf32>, tensor<2xf32>, tensor<i64>
    }
    return %y#0, %y#1, %y#2 : tensor<4x2xf32>, tensor<2xf32>, tensor<i64>
  }
}

// -----

// A parameter the step writes in place (nn.Embedding's max_norm renorm) is
// replaced where it lives, after the last kernel reading the weight (as
// every in-place write) and right before its update applies the gradient.
// SPLIT-LABEL: func.func @parameter_written_in_place
// SPLIT: %[[K:.*]]:2 = wsc.kernel "emb.fwd"
// SPLIT: wsc.kernel "emb.bwd"
// SPLIT: wsc.wafer.assign @emb.weight(%[[K]]#1) : tensor<2xf32>
// SPLIT-NEXT: wsc.wafer.update @emb.weight
module attributes {wsc.mode = #wsc.mode<layer_pipelined>, wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  func.func @parameter_written_in_place(%w: tensor<2xf32> {wsc.param = "emb.weight"}, %x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}, tensor<2xf32> {wsc.grad = "emb.weight"}, tensor<2xf32> {wsc.buffer_update = "emb.weight"}) {
    %y:2 = wsc.kernel "emb.fwd" layer("emb") phase(<forward>) (%x, %w) : (tensor<4x2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>) {
    ^bb0(%a: tensor<4x2xf32>, %b: tensor<2xf32>):
      wsc.yield %a, %b : tensor<4x2xf32>, tensor<2xf32>
    }
    %g = wsc.kernel "emb.bwd" layer("emb") phase(<backward>) (%x, %w) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<2xf32> {
    ^bb0(%a: tensor<4x2xf32>, %b: tensor<2xf32>):
      wsc.yield %b : tensor<2xf32>
    }
    return %y#0, %g, %y#1 : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>
  }
}

// -----

module attributes {wsc.mode = #wsc.mode<layer_pipelined>} {
  // expected-error @+1 {{buffer 'bn.running_mean' must be a static f32, i64 or i1 tensor, got 'tensor<2xf16>'}}
  func.func @f(%m: tensor<2xf16> {wsc.buffer = "bn.running_mean"}, %x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2xf32>
  }
}

// -----

// The weight's gradient is ready (kernel "fc.bwd.0") before the last kernel
// reading the weight ("fc.bwd.1", the input's gradient): the in-place update
// waits for that reader.
// SPLIT-LABEL: func.func @update_after_last_read
// SPLIT: wsc.kernel "fc.bwd.0"
// SPLIT-NOT: wsc.wafer.update
// SPLIT: wsc.kernel "fc.bwd.1"
// SPLIT: wsc.wafer.update @w(%{{.*}}) : tensor<2xf32>
// SPLIT-NEXT: return
module attributes {wsc.mode = #wsc.mode<layer_pipelined>, wsc.optimizer = {name = "sgd", lr = 0.1 : f64}} {
  func.func @update_after_last_read(%w: tensor<2xf32> {wsc.param = "w"}, %x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}, tensor<2xf32> {wsc.grad = "w"}) {
    %g = wsc.kernel "fc.bwd.0" layer("fc") phase(<backward>) (%x) : (tensor<4x2xf32>) -> tensor<2xf32> {
    ^bb0(%a: tensor<4x2xf32>):
      %e = tensor.empty() : tensor<2xf32>
      wsc.yield %e : tensor<2xf32>
    }
    %dx = wsc.kernel "fc.bwd.1" layer("fc") phase(<backward>) (%w) : (tensor<2xf32>) -> tensor<2xf32> {
    ^bb0(%b: tensor<2xf32>):
      wsc.yield %b : tensor<2xf32>
    }
    return %dx, %g : tensor<2xf32>, tensor<2xf32>
  }
}
