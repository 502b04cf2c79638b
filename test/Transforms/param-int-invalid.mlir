// An integer parameter is reported at its argument (line and column), by
// wsc-select-mode, before placement (issue 21: it was reported at the
// function, after the whole pipeline had run).
// RUN: not wsc-opt %s --wsc-pipeline 2>&1 | FileCheck %s

// CHECK-NOT: remark
// CHECK: param-int-invalid.mlir:[[@LINE+2]]:20: error: parameter 'w' must be a static f32 tensor, got 'tensor<3xi64>'
// CHECK-NOT: remark
func.func @forward(%w: tensor<3xi64> {wsc.param = "w"}, %x: tensor<8x3xi64> {wsc.input = 0 : i64}) -> (tensor<8x3xi64> {wsc.output = 0 : i64}) {
  %e = tensor.empty() : tensor<8x3xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w, %x : tensor<3xi64>, tensor<8x3xi64>) outs(%e : tensor<8x3xi64>) {
  ^bb0(%a: i64, %b: i64, %o: i64):
    %s = arith.addi %a, %b : i64
    linalg.yield %s : i64
  } -> tensor<8x3xi64>
  return %r : tensor<8x3xi64>
}
