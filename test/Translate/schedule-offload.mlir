// Activations kept in MemoryX (offload-activations): each offloaded value
// carries "offload_back_at", the step that reads it back, which is a backward
// kernel (or a conversion for one); the report says what was offloaded.
// Without the option the same step does not fit.
// RUN: wsc-opt %S/Inputs/deep-mlp-train.mlir --wsc-pipeline="mode=weight_streaming grid=1x1 stream-dtype=f32 offload-activations recompute=none" 2>/dev/null \
// RUN:   | wsc-translate --wsc-to-schedule | FileCheck %s
// RUN: not wsc-opt %S/Inputs/deep-mlp-train.mlir --wsc-pipeline="mode=weight_streaming grid=1x1 stream-dtype=f32 micro-batch=none recompute=none" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RESIDENT
// RUN: wsc-translate --wsc-to-schedule %s -split-input-file -verify-diagnostics >/dev/null

// CHECK: "memory_plan": "memory plan offload (recompute=none): of 6 activations kept for the backward pass, 0 stored, 0 recomputed, 6 offloaded
// CHECK: "values": [
// CHECK: "offload_back_at": {{[0-9]+}},
// RESIDENT: error: the step's live values need {{[0-9]+}} bytes per PE at kernel {{.*}}; recompute=auto (wsc.compile(recompute="auto")) makes it fit: memory plan offload, peak {{[0-9]+}} bytes per PE

// A value marked for MemoryX that no backward kernel reads back.
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @step(%x: tensor<8x4xf32> {wsc.input = 0 : i64}) -> (tensor<8x4xf32> {wsc.output = 0 : i64}) {
    // expected-error @+1 {{'wsc.kernel' op keeps result #0 in MemoryX (wsc.offload), but no backward kernel reads it after other ops}}
    %0 = wsc.kernel "a" layer("a") phase(<forward>) (%x) {wsc.offload = array<i64: 0>} : (tensor<8x4xf32>) -> tensor<8x4xf32> {
    ^bb0(%a: tensor<8x4xf32>):
      wsc.yield %a : tensor<8x4xf32>
    }
    return %0 : tensor<8x4xf32>
  }
}
