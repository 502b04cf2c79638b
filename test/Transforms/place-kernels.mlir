// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-attach-target=target=tiny --wsc-form-kernels --wsc-select-mode=mode=layer_pipelined --wsc-place-kernels 2>&1 | FileCheck %s
// RUN: wsc-opt %s --wsc-place-kernels -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=SPLIT
// RUN: wsc-opt %s --wsc-place-kernels=fallback=true -split-input-file 2>&1 | FileCheck %s --check-prefix=FALLBACK
// RUN: not wsc-opt %s --wsc-place-kernels=time-limit=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=LIMIT

// LIMIT: error: time-limit must be positive, got 0.000000e+00

// Every layer gets one region and one kernel model, shared by its forward
// and backward kernels; values crossing layers are routed centre to centre.
// CHECK: remark: placed 3 layers on 16x16 PEs: slowest 2 cycles per sample (area lower bound 2), wire length {{[0-9]+}} PEs
// CHECK-LABEL: func.func @train_step
// CHECK: %[[H:.*]] = wsc.kernel "0.fwd" {{.*}}model = #wsc.kernel_model<kind = "matmul", formal = [1, 4, 3], exec = [{{.*}}], cycles = 2, memory = {{[0-9]+}}>, rect = #wsc.rect<x = [[X0:[0-9]+]], y = [[Y0:[0-9]+]], w = [[W0:[0-9]+]], h = [[H0:[0-9]+]]>
// CHECK: %[[R:.*]] = wsc.route %[[H]] from("0") to("2") path([{{[0-9, ]+}}]) : tensor<8x3xf32>
// CHECK: wsc.kernel "2.fwd" {{.*}}(%[[R]], {{.*}}model = #wsc.kernel_model<kind = "matmul", formal = [1, 3, 2]
// CHECK: wsc.kernel "loss" {{.*}}model = #wsc.kernel_model<kind = "eltwise", formal = [2, 6]
// CHECK: wsc.route {{.*}} from("loss") to("2")
// CHECK: wsc.route {{.*}} from("2") to("0")
// The stored forward activation stays in its layer: no route.
// CHECK: wsc.kernel "0.bwd" layer("0") phase(<backward>) (%[[H]], {{.*}}rect = #wsc.rect<x = [[X0]], y = [[Y0]], w = [[W0]], h = [[H0]]>

// -----

// A weight-streaming module is left alone.
// SPLIT-LABEL: func.func @streamed
// SPLIT-NOT: rect
// SPLIT-NOT: wsc.route
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @streamed(%x: tensor<8x64xf32> {wsc.input = 0 : i64}, %w: tensor<64x64xf32> {wsc.param = "w"}) -> tensor<8x64xf32> {
    %y = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%x, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%a: tensor<8x64xf32>, %b: tensor<64x64xf32>):
      %e = tensor.empty() : tensor<8x64xf32>
      %m = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x64xf32>) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
      wsc.yield %m : tensor<8x64xf32>
    }
    return %y : tensor<8x64xf32>
  }
}

// -----

// Nothing fits a one-PE wafer: an error, or with fallback a switch to
// weight streaming.
// expected-error @+3 {{layer-pipelined placement failed: kernel fc (matmul) fits no rectangle of the 1x1 wafer within memlimit 12288 words}}
// FALLBACK: warning: layer-pipelined placement failed: kernel fc (matmul) fits no rectangle of the 1x1 wafer within memlimit 12288 words; compiling in weight_streaming mode
// FALLBACK: module attributes {wsc.mode = #wsc.mode<weight_streaming>
module attributes {wsc.mode = #wsc.mode<layer_pipelined>, wsc.target = #wsc.target<grid_x = 1, grid_y = 1>} {
  func.func @too_small(%x: tensor<8x64xf32> {wsc.input = 0 : i64}, %w: tensor<64x64xf32> {wsc.param = "w"}) -> tensor<8x64xf32> {
    %y = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%x, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%a: tensor<8x64xf32>, %b: tensor<64x64xf32>):
      %e = tensor.empty() : tensor<8x64xf32>
      %m = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x64xf32>) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
      wsc.yield %m : tensor<8x64xf32>
    }
    return %y : tensor<8x64xf32>
  }
}
