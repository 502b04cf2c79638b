// RUN: wsc-opt %s | wsc-opt | FileCheck %s
// RUN: wsc-opt %s --canonicalize | FileCheck %s --check-prefix=FOLD

// CHECK: module attributes {wsc.mode = #wsc.mode<weight_streaming>, wsc.target = #wsc.target<grid_x = 64, grid_y = 32, clock_hz = 8.500000e+08, systems = 4, weight_dtype = bf16>}
module attributes {wsc.target = #wsc.target<grid_x = 64, grid_y = 32, systems = 4, clock_hz = 8.5e8, weight_dtype = bf16>,
                   wsc.mode = #wsc.mode<weight_streaming>} {
  // CHECK: wsc.memx.param @fc.weight : tensor<4x3xf32> optimizer(<adamw, lr = 1.000000e-02, beta2 = 0.94999999999999996, amsgrad = true, weight_decay = 1.000000e-01>)
  wsc.memx.param @fc.weight : tensor<4x3xf32> optimizer(<adamw, lr = 1.0e-2, beta2 = 0.95, amsgrad = true, weight_decay = 0.1>)
  // CHECK: wsc.memx.param @fc.bias : tensor<4xf32> optimizer(<sgd, lr = 1.000000e-01, momentum = 9.000000e-01, nesterov = true>)
  wsc.memx.param @fc.bias : tensor<4xf32> optimizer(<sgd, lr = 0.1, momentum = 0.9, nesterov = true>)
  // CHECK: wsc.memx.buffer @bn.running_mean : tensor<4xf32>
  wsc.memx.buffer @bn.running_mean : tensor<4xf32>
  // CHECK: wsc.memx.buffer @bn.num_batches_tracked : tensor<i64>
  wsc.memx.buffer @bn.num_batches_tracked : tensor<i64>
  // CHECK: wsc.memx.param @imported : tensor<2xf32> optimizer(<sgd, lr = 0.000000e+00>) initial_value(dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>)
  wsc.memx.param @imported : tensor<2xf32> optimizer(<sgd, lr = 0.0>) initial_value(dense<[1.0, 2.0]> : tensor<2xf32>)

  // CHECK-LABEL: func.func @step
  func.func @step(%x: tensor<8x3xf32>) -> tensor<8x4xf32> {
    // CHECK: %[[S:.*]] = wsc.memx.stream @fc.weight order(<row_major>) : <tensor<4x3xbf16>>
    %s = wsc.memx.stream @fc.weight order(<row_major>) : !wsc.stream<tensor<4x3xbf16>>
    // CHECK: %[[B:.*]] = wsc.swarmx.broadcast %[[S]] : <tensor<4x3xbf16>>
    %b = wsc.swarmx.broadcast %s : !wsc.stream<tensor<4x3xbf16>>
    // CHECK: %[[Y:.*]] = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%{{.*}}, %[[B]]) {rect = #wsc.rect<x = 0, y = 0, w = 64, h = 32>}
    %y = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%x, %b) {rect = #wsc.rect<x = 0, y = 0, w = 64, h = 32>} : (tensor<8x3xf32>, !wsc.stream<tensor<4x3xbf16>>) -> tensor<8x4xf32> {
    ^bb0(%a: tensor<8x3xf32>, %w: tensor<4x3xf32>):
      %e = tensor.empty() : tensor<8x4xf32>
      wsc.yield %e : tensor<8x4xf32>
    }
    // CHECK: wsc.layout_convert %[[Y]] from(<dims = ["b", "h"], x = ["h"], y = ["b"]>) to(<dims = ["b", "h"], x = ["b", "h"], y = []>)
    %c = wsc.layout_convert %y from(#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"]>) to(#wsc.layout<dims = ["b", "h"], x = ["b", "h"], y = []>) : tensor<8x4xf32>
    // A conversion its consumer reads as it passes (it takes no SRAM).
    // CHECK: wsc.layout_convert %[[Y]] streamed from(<dims = ["b", "h"], x = ["h"], y = ["b"]>) to(<dims = ["b", "h"], x = [], y = ["b"]>)
    %passing = wsc.layout_convert %y streamed from(#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"]>) to(#wsc.layout<dims = ["b", "h"], x = [], y = ["b"]>) : tensor<8x4xf32>
    // Figure 16's split and a tiling rule round-trip; defaults are not printed.
    // CHECK: wsc.layout_convert %{{.*}} from(<dims = ["b", "h"], x = ["h"], y = ["b"]>) to(<dims = ["b", "h"], x = ["b.0", "h"], y = ["b.1"], split = ["b:2"], tiling = uneven>)
    %split = wsc.layout_convert %c from(#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"], split = [], tiling = exact>) to(#wsc.layout<dims = ["b", "h"], x = ["b.0", "h"], y = ["b.1"], split = ["b:2"], tiling = uneven>) : tensor<8x4xf32>
    // CHECK: %[[G:.*]] = wsc.swarmx.reduce %{{.*}} order(<transposed>) : tensor<3x4xf32> -> <tensor<4x3xf32>>
    %gw = tensor.empty() : tensor<3x4xf32>
    %g = wsc.swarmx.reduce %gw order(<transposed>) : tensor<3x4xf32> -> !wsc.stream<tensor<4x3xf32>>
    // CHECK: wsc.memx.update @fc.weight(%[[G]]) : <tensor<4x3xf32>>
    wsc.memx.update @fc.weight(%g) : !wsc.stream<tensor<4x3xf32>>
    // CHECK: %[[M:.*]] = wsc.memx.stream @bn.running_mean order(<row_major>) : <tensor<4xf32>>
    %m = wsc.memx.stream @bn.running_mean order(<row_major>) : !wsc.stream<tensor<4xf32>>
    // CHECK: %[[N:.*]] = wsc.memx.stream @bn.num_batches_tracked order(<row_major>) : <tensor<i64>>
    %n = wsc.memx.stream @bn.num_batches_tracked order(<row_major>) : !wsc.stream<tensor<i64>>
    // CHECK: %[[T:.*]] = wsc.swarmx.all_reduce %{{.*}} : tensor<4xf32>
    %p = tensor.empty() : tensor<4xf32>
    %t = wsc.swarmx.all_reduce %p : tensor<4xf32>
    // CHECK: wsc.memx.assign @bn.running_mean(%[[T]]) : tensor<4xf32>
    wsc.memx.assign @bn.running_mean(%t) : tensor<4xf32>
    // FOLD-LABEL: func.func @step
    // FOLD-NOT: wsc.layout_convert %{{.*}} from(<dims = ["b", "h"], x = ["h"], y = ["b"]>) to(<dims = ["b", "h"], x = ["h"], y = ["b"]>)
    %same = wsc.layout_convert %c from(#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"]>) to(#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"]>) : tensor<8x4xf32>
    return %same : tensor<8x4xf32>
  }
}
