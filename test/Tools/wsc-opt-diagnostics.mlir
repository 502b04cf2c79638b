// An error names its op and location and stops there: wsc-opt does not
// print the failing op after it (for a function, the whole function), unless
// asked to with --mlir-print-op-on-diagnostic.
// RUN: not wsc-opt %s --wsc-pipeline="systems=2" 2>&1 | FileCheck %s
// RUN: not wsc-opt %s --wsc-pipeline="systems=2" 2>&1 | wc -c | FileCheck --check-prefix=SIZE %s
// RUN: not wsc-opt %s --wsc-pipeline="systems=2" --mlir-print-op-on-diagnostic 2>&1 | FileCheck --check-prefix=ASKED %s

// CHECK: error: batch arguments disagree on the batch size: 4 vs 5
// CHECK-NOT: see current operation
// CHECK-NOT: linalg.generic
// SIZE: {{^[1-3][0-9]{2}$}}
// ASKED: note: see current operation
// ASKED: "func.func"

func.func @f(%a: tensor<4x8xf32> {wsc.input = 0 : i64}, %b: tensor<5xf32> {wsc.input = 1 : i64}) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
