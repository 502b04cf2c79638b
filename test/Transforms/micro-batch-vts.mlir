// RUN: wsc-opt %s -verify-diagnostics --wsc-micro-batch=micro-batch=auto | FileCheck %s

// A VTS step keeps its all-reduces on one system: wsc-vts put them where
// the samples of a ragged kernel, each run on its own, need the batch's
// total. (VTS steps are not split, so the micro-batch is the whole batch.)
// CHECK-LABEL: module @vts_keeps_its_totals
// CHECK: %[[S:.*]] = wsc.swarmx.all_reduce %arg1
// CHECK: return %[[S]]
// expected-remark @+1 {{none (auto): variable tensor shape steps are not run in micro-batches yet}}
module @vts_keeps_its_totals attributes {wsc.target = #wsc.target<systems = 1>, wsc.vts = #wsc.vts<ragged_work = 0.5>} {
  func.func @step(%x: tensor<8x4xf32> {wsc.input = 0 : i64}, %p: tensor<4xf32>) -> tensor<4xf32> {
    %s = wsc.swarmx.all_reduce %p : tensor<4xf32>
    return %s : tensor<4xf32>
  }
}
