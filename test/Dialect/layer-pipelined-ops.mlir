// RUN: wsc-opt %s | wsc-opt | FileCheck %s

// The layer-pipelined ops round-trip: resident parameters and buffers,
// in-place reads, updates and assignments, routes, and placed kernels with
// their model.
// CHECK: module attributes {wsc.mode = #wsc.mode<layer_pipelined>
module attributes {wsc.mode = #wsc.mode<layer_pipelined>, wsc.target = #wsc.target<grid_x = 32, grid_y = 32>} {
  // CHECK: wsc.wafer.param @fc.weight : tensor<4x3xf32> optimizer(<sgd, lr = 1.000000e-01>)
  wsc.wafer.param @fc.weight : tensor<4x3xf32> optimizer(<sgd, lr = 0.1>)
  // CHECK: wsc.wafer.param @imported : tensor<2xf32> optimizer(<sgd, lr = 0.000000e+00>) initial_value(dense_resource<blob> : tensor<2xf32>)
  wsc.wafer.param @imported : tensor<2xf32> optimizer(<sgd, lr = 0.0>) initial_value(dense_resource<blob> : tensor<2xf32>)
  // CHECK: wsc.wafer.buffer @bn.running_mean : tensor<4xf32>
  wsc.wafer.buffer @bn.running_mean : tensor<4xf32>
  // CHECK: wsc.wafer.buffer @bn.num_batches_tracked : tensor<i64>
  wsc.wafer.buffer @bn.num_batches_tracked : tensor<i64>

  // CHECK-LABEL: func.func @step
  func.func @step(%x: tensor<8x3xf32>) -> tensor<8x4xf32> {
    // CHECK: %[[W:.*]] = wsc.wafer.weight @fc.weight : tensor<4x3xf32>
    %w = wsc.wafer.weight @fc.weight : tensor<4x3xf32>
    // CHECK: %[[Y:.*]] = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%{{.*}}, %[[W]]) {model = #wsc.kernel_model<kind = "matmul", formal = [1, 3, 4], exec = [1, 3, 2], cycles = 5, memory = 9>, rect = #wsc.rect<x = 0, y = 0, w = 6, h = 4>}
    %y = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%x, %w) {model = #wsc.kernel_model<kind = "matmul", formal = [1, 3, 4], exec = [1, 3, 2], cycles = 5, memory = 9>, rect = #wsc.rect<x = 0, y = 0, w = 6, h = 4>} : (tensor<8x3xf32>, tensor<4x3xf32>) -> tensor<8x4xf32> {
    ^bb0(%a: tensor<8x3xf32>, %b: tensor<4x3xf32>):
      %e = tensor.empty() : tensor<8x4xf32>
      wsc.yield %e : tensor<8x4xf32>
    }
    // CHECK: %[[R:.*]] = wsc.route %[[Y]] from("fc") to("head") path([3, 2, 20, 2, 20, 9]) : tensor<8x4xf32>
    %r = wsc.route %y from("fc") to("head") path([3, 2, 20, 2, 20, 9]) : tensor<8x4xf32>
    // CHECK: wsc.wafer.update @fc.weight(%{{.*}}) : tensor<4x3xf32>
    %g = tensor.empty() : tensor<4x3xf32>
    wsc.wafer.update @fc.weight(%g) : tensor<4x3xf32>
    // CHECK: %[[N:.*]] = wsc.wafer.weight @bn.num_batches_tracked : tensor<i64>
    %n = wsc.wafer.weight @bn.num_batches_tracked : tensor<i64>
    // CHECK: wsc.wafer.assign @bn.num_batches_tracked(%[[N]]) : tensor<i64>
    wsc.wafer.assign @bn.num_batches_tracked(%n) : tensor<i64>
    return %r : tensor<8x4xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F00000040"
    }
  }
#-}
