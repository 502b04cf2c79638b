// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-form-kernels --wsc-select-mode -o %t 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: FileCheck %s --check-prefix=AUTOIR < %t
// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-form-kernels --wsc-select-mode=mode=weight_streaming -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORCED
// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-attach-target="target=tiny" --wsc-form-kernels --wsc-select-mode 2>&1 | FileCheck %s --check-prefix=TINY
// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-form-kernels --wsc-select-mode=mode=layer_pipelined 2>&1 | FileCheck %s --check-prefix=LP
// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-attach-target="systems=2" --wsc-form-kernels --wsc-select-mode 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-attach-target="systems=2" --wsc-form-kernels --wsc-select-mode=mode=layer_pipelined 2>&1 | FileCheck %s --check-prefix=TWOLP
// RUN: not wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-form-kernels --wsc-select-mode=mode=fast 2>&1 | FileCheck %s --check-prefix=BAD

// The tiny MLP fits on a CS-2 wafer, and its 8 samples flow through the
// layers faster than each layer's weights stream in: auto picks
// layer-pipelined.
// AUTO: remark: mode layer_pipelined (auto): layer-pipelined footprint {{.*}} (weights, gradients and optimizer state 144.0 B; activations 20.0 B; pipeline buffers 24.0 B; 2 stages, 18 parameters, batch 8) fits in wafer SRAM 38.9 GB; estimated step: weight streaming 8.47 us, layer-pipelined 0.02 us at best
// AUTO-NOT: warning
// AUTOIR: module attributes {{.*}}wsc.mode = #wsc.mode<layer_pipelined>

// FORCED: remark: mode weight_streaming (forced)
// FORCED-NOT: warning

// A 16x16 wafer holds 12 KB: the same model still fits.
// TINY: fits in wafer SRAM 12.0 MB

// LP: remark: mode layer_pipelined (forced)

// Layer-pipelined mode runs on one wafer: with two systems auto streams
// weights, and forcing layer-pipelined is an error.
// TWO: remark: mode weight_streaming (auto): {{.*}} fits in wafer SRAM {{.*}}; 2 systems need weight streaming
// TWOLP: error: layer-pipelined mode runs on one system, not 2; use systems=1 or mode=weight_streaming
// BAD: for the --mode option: Cannot find option named 'fast'!

// BatchNorm's buffers stay resident on the wafer like the weights: a model
// with buffers that fits runs layer-pipelined too.
// conv-bn-train pads its convolutions: wsc-legalize decomposes them, as the pipeline does.
// RUN: wsc-opt %S/../Translate/Inputs/conv-bn-train.mlir --wsc-legalize --wsc-form-kernels --wsc-select-mode -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUFFERS
// BUFFERS: remark: mode layer_pipelined (auto): {{.*}} fits in wafer SRAM {{[0-9.]+ [KMGT]?B}}; estimated step:
// Both modes fit, and auto takes the faster step. A 64-wide MLP at batch
// 4096 has too little work per sample to fill the wafer layer by layer (each
// layer's kernel is at most as wide as one sample's work), while weight
// streaming spreads the whole batch over the wafer for each layer in turn:
// weight streaming is faster, and auto picks it although the model fits.
// RUN: wsc-opt %S/Inputs/mlp-large-batch-train.mlir --wsc-form-kernels --wsc-select-mode -o %t.large 2>&1 | FileCheck %s --check-prefix=FASTER-WS
// RUN: FileCheck %s --check-prefix=FASTER-WS-IR < %t.large
// FASTER-WS: remark: mode weight_streaming (auto): layer-pipelined footprint {{.*}} batch 4096) fits in wafer SRAM 38.9 GB; estimated step: weight streaming 19.72 us, layer-pipelined 33.54 us at best
// FASTER-WS-IR: wsc.mode = #wsc.mode<weight_streaming>
// Where the weights stream longer than the kernels compute (5.3M f32
// parameters, batch 2), each kernel takes its streams' time: the estimate
// is the step wsc-micro-batch models for the whole batch (micro-batch.mlir,
// STREAMS), not the 32.68 us the kernels compute.
// RUN: wsc-opt %S/../Translate/Inputs/deep-mlp-train.mlir --wsc-attach-target="stream-dtype=f32" --wsc-form-kernels --wsc-select-mode -o /dev/null 2>&1 | FileCheck %s --check-prefix=STREAM-BOUND
// STREAM-BOUND: remark: mode layer_pipelined (auto): {{.*}}; estimated step: weight streaming 290.17 us, layer-pipelined 0.47 us at best
// Forced, the mode is kept whatever the estimates, and none is printed.
// RUN: wsc-opt %S/Inputs/mlp-large-batch-train.mlir --wsc-form-kernels --wsc-select-mode=mode=layer_pipelined -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORCED-LP
// On an 8x8 wafer the same model's footprint fits, but no layout of its
// layer-pipelined kernels fits a PE: auto says so, and streams weights
// (where micro-batching makes it fit, issue 40 class 7).
// RUN: wsc-opt %S/Inputs/mlp-large-batch-train.mlir --wsc-attach-target="grid=8x8" --wsc-form-kernels --wsc-select-mode -o /dev/null 2>&1 | FileCheck %s --check-prefix=LP-OVERFLOW
// LP-OVERFLOW: remark: mode weight_streaming (auto): {{.*}} fits in wafer SRAM 3.0 MB; estimated step: weight streaming {{.*}}, layer-pipelined {{.*}} at best, but its layouts do not fit PE SRAM (kernel '2.bwd': no layout fits the 49152-byte PE SRAM; the smallest (fig15) needs 65536 bytes per PE)
// FORCED-LP: remark: mode layer_pipelined (forced): {{.*}} fits in wafer SRAM 38.9 GB{{$}}

// RUN: echo "module {}" | not wsc-opt --wsc-select-mode 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: no function to compile

// RUN: wsc-opt %s --wsc-select-mode 2>&1 | FileCheck %s --check-prefix=EXCEEDS
// A 64x64 weight (with its gradient: 32 KB) does not fit one PE of 16 KB.
// EXCEEDS: remark: mode weight_streaming (auto): layer-pipelined footprint {{.*}} exceeds wafer SRAM 16.0 KB
// EXCEEDS: wsc.mode = #wsc.mode<weight_streaming>
module attributes {wsc.target = #wsc.target<grid_x = 1, grid_y = 1, sram_per_pe = 16384>} {
  func.func @big(%x: tensor<8x64xf32> {wsc.input = 0 : i64}, %w: tensor<64x64xf32> {wsc.param = "w"}) -> tensor<8x64xf32> {
    %y = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%x, %w) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> {
    ^bb0(%a: tensor<8x64xf32>, %b: tensor<64x64xf32>):
      %e = tensor.empty() : tensor<8x64xf32>
      %m = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x64xf32>) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
      wsc.yield %m : tensor<8x64xf32>
    }
    return %y : tensor<8x64xf32>
  }
}
