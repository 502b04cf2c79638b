// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-attach-target=target=tiny --wsc-form-kernels --wsc-select-mode=mode=layer_pipelined --wsc-place-kernels 2>&1 | FileCheck %s
// RUN: wsc-opt %s --wsc-place-kernels -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=SPLIT
// RUN: wsc-opt %s --wsc-place-kernels=fallback=true -split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=FALLBACK
// RUN: wsc-opt %s --wsc-place-kernels=fallback=true -split-input-file 2>/dev/null | FileCheck %s --check-prefix=FALLBACKIR
// RUN: not wsc-opt %s --wsc-place-kernels=time-limit=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=LIMIT

// RUN: wsc-opt %S/../Translate/Inputs/vts-token-mlp.mlir --wsc-pipeline="mode=layer_pipelined vts=on target=tiny" 2>/dev/null | FileCheck %s --check-prefix=PADDED
// RUN: wsc-opt %S/../Translate/Inputs/vts-token-mlp.mlir --wsc-pipeline="mode=layer_pipelined vts=on target=tiny expected-valid-fraction=0.25" 2>/dev/null | FileCheck %s --check-prefix=VTS
// RUN: not wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-attach-target=target=tiny --wsc-form-kernels --wsc-select-mode=mode=layer_pipelined --wsc-place-kernels=expected-valid-fraction=2 2>&1 | FileCheck %s --check-prefix=FRACTION

// LIMIT: error: time-limit must be a finite number of seconds > 0, got 0.000000e+00
// FRACTION: error: expected-valid-fraction must be in (0, 1], got 2.000000e+00

// Variable tensor shape: a ragged layer is placed for the expected sample
// (8 tokens per sample, a quarter valid: 2 rows), and its model gives a
// padded sample's cycles (the runtime scales them by each sample's work).
// PADDED: kernel_model<kind = "matmul", formal = [8, 4, 6], exec = [8, 1, 3], cycles = 2,
// VTS: kernel_model<kind = "matmul", formal = [2, 4, 6], exec = [2, 1, 3], cycles = 8,

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
// FALLBACKIR: module attributes {wsc.mode = #wsc.mode<weight_streaming>, wsc.report = {warnings = ["layer-pipelined placement failed: kernel fc (matmul) fits no rectangle of the 1x1 wafer within memlimit 12288 words; compiling in weight_streaming mode"]}, wsc.target = #wsc.target<grid_x = 1, grid_y = 1>}
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

// -----

// No kernel model takes 3e9 elements per sample.
// FALLBACK: warning: layer 'k' has no layer-pipelined kernel model: E = 3000000000 is outside [1, 2147483648]; compiling in weight_streaming mode
// FALLBACKIR: module attributes {wsc.mode = #wsc.mode<weight_streaming>, wsc.report = {warnings = ["layer 'k' has no layer-pipelined kernel model: {{.*}}; compiling in weight_streaming mode"]}} {
// FALLBACKIR-NEXT: func.func @huge
module attributes {wsc.mode = #wsc.mode<layer_pipelined>} {
  func.func @huge(%x: tensor<1x3000000000xf32> {wsc.input = 0 : i64}) -> (tensor<1x3000000000xf32> {wsc.output = 0 : i64}) {
    // expected-error @+1 {{layer 'k' has no layer-pipelined kernel model: E = 3000000000 is outside [1, 2147483648]}}
    %y = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<1x3000000000xf32>) -> tensor<1x3000000000xf32> {
    ^bb0(%a: tensor<1x3000000000xf32>):
      %e = tensor.empty() : tensor<1x3000000000xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<1x3000000000xf32>) outs(%e : tensor<1x3000000000xf32>) {
      ^bb0(%in: f32, %out: f32):
        %s = arith.mulf %in, %in : f32
        linalg.yield %s : f32
      } -> tensor<1x3000000000xf32>
      wsc.yield %r : tensor<1x3000000000xf32>
    }
    return %y : tensor<1x3000000000xf32>
  }
}
