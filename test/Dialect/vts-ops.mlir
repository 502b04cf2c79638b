// RUN: wsc-opt %s | wsc-opt | FileCheck %s

// CHECK: module attributes {wsc.vts = #wsc.vts<threshold = 5.000000e-01, ragged_work = 7.500000e-01>}
module attributes {wsc.vts = #wsc.vts<threshold = 0.5, ragged_work = 0.75>} {
  // CHECK-LABEL: func.func @pair
  // CHECK-SAME: (%[[X:.*]]: tensor<2x8x4xf32>, %[[M:.*]]: tensor<2x8xi1>, %[[N:.*]]: tensor<2x8xi64>)
  func.func @pair(%x: tensor<2x8x4xf32>, %m: tensor<2x8xi1>, %n: tensor<2x8xi64>) -> tensor<2x8x4xf32> {
    // The default seq_dim (1) is elided.
    // CHECK: %[[S:.*]] = wsc.strip_padding %[[X]], %[[M]] : tensor<2x8x4xf32>, tensor<2x8xi1>
    %s = wsc.strip_padding %x, %m {seq_dim = 1 : i64} : tensor<2x8x4xf32>, tensor<2x8xi1>
    // CHECK: %[[R:.*]] = wsc.restore_padding %[[S]], %[[M]] : tensor<2x8x4xf32>, tensor<2x8xi1>
    %r = wsc.restore_padding %s, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    // CHECK: wsc.strip_padding %{{.*}}, %[[N]] {seq_dim = 2 : i64} : tensor<2x4x8xf32>, tensor<2x8xi64>
    %t = tensor.empty() : tensor<2x4x8xf32>
    %u = wsc.strip_padding %t, %n {seq_dim = 2 : i64} : tensor<2x4x8xf32>, tensor<2x8xi64>
    return %r : tensor<2x8x4xf32>
  }
}
