// An error names its op and location and stops there: wsc-opt and
// wsc-translate do not print the failing op after it (for a function, the
// whole function), unless asked to with --mlir-print-op-on-diagnostic.
// RUN: not wsc-opt %s --wsc-pipeline="mode=weight_streaming" 2>&1 | FileCheck %s
// RUN: not wsc-opt %s --wsc-pipeline="mode=weight_streaming" 2>&1 | wc -c | FileCheck --check-prefix=SIZE %s
// RUN: not wsc-opt %s --wsc-pipeline="mode=weight_streaming" --mlir-print-op-on-diagnostic 2>&1 | FileCheck --check-prefix=ASKED %s
// RUN: not wsc-translate --wsc-to-schedule %s 2>&1 | FileCheck --check-prefix=TRANSLATE %s
// RUN: not wsc-translate --wsc-to-schedule %s 2>&1 | wc -c | FileCheck --check-prefix=SIZE %s

// CHECK: error: parameter 'w' declared twice
// CHECK-NOT: see current operation
// CHECK-NOT: linalg.generic
// SIZE: {{^[1-9][0-9]{2}$}}
// ASKED: note: see current operation
// ASKED: linalg.generic
// TRANSLATE: error: module has no 'wsc.mode'; run --wsc-pipeline first
// TRANSLATE-NOT: see current operation

module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
func.func @f(%a: tensor<4xf32> {wsc.param = "w"}, %b: tensor<4xf32> {wsc.param = "w"}, %x: tensor<2x4xf32> {wsc.input = 0 : i64}) -> (tensor<2x4xf32> {wsc.output = 0 : i64}) {
  %e = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %a, %b : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%v: f32, %p: f32, %q: f32, %o: f32):
    %y = arith.mulf %v, %p : f32
    %z = arith.addf %y, %q : f32
    linalg.yield %z : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
}
