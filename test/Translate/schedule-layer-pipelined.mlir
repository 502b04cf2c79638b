// RUN: wsc-opt %S/../Transforms/Inputs/mlp-mse-train.mlir --wsc-pipeline="mode=layer_pipelined target=tiny" -o %t.mlir 2>/dev/null
// RUN: wsc-translate --wsc-to-schedule %t.mlir | FileCheck %s
// RUN: not wsc-translate --wsc-to-schedule %s -split-input-file 2>&1 | FileCheck %s --check-prefix=ERR

// Layer-pipelined schedules read resident weights, route activations
// between regions and update weights in place; every kernel carries its
// region and kernel model.
// CHECK: "mode": "layer_pipelined"
// CHECK: "name": "0.weight"
// CHECK: "steps": [
// CHECK: "op": "weight_read"
// CHECK-NEXT: "param": "0.weight"
// CHECK: "layer": "0"
// CHECK-NEXT: "lp": {
// CHECK-NEXT: "cycles_per_sample": {{[0-9]+}}
// CHECK-NEXT: "exec": [
// CHECK: "formal": [
// CHECK: "kind": "matmul"
// CHECK-NEXT: "memory_words": {{[0-9]+}}
// CHECK: "name": "0.fwd"
// CHECK: "region": {
// CHECK-NEXT: "height": {{[0-9]+}}
// CHECK-NEXT: "width": {{[0-9]+}}
// CHECK-NEXT: "x": {{[0-9]+}}
// CHECK-NEXT: "y": {{[0-9]+}}
// CHECK: "from": "0"
// CHECK-NEXT: "hops": {{[0-9]+}}
// CHECK-NEXT: "op": "route"
// CHECK: "to": "2"
// CHECK: "name": "loss"
// CHECK: "name": "2.bwd"
// CHECK: "op": "weight_update"
// CHECK-NEXT: "operand": {{[0-9]+}}
// CHECK-NEXT: "param": "2.weight"
// CHECK: "op": "weight_update"
// CHECK-NEXT: "operand": {{[0-9]+}}
// CHECK-NEXT: "param": "0.weight"
// CHECK-NOT: "weight_stream"
// CHECK-NOT: "gradient_stream"
// CHECK: "systems": 1

// ERR: error: 'wsc.kernel' op has no region on the wafer; layer-pipelined kernels are placed by wsc-place-kernels
module attributes {wsc.mode = #wsc.mode<layer_pipelined>} {
  func.func @f(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    %y = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<2xf32>) -> tensor<2xf32> {
    ^bb0(%a: tensor<2xf32>):
      wsc.yield %a : tensor<2xf32>
    }
    return %y : tensor<2xf32>
  }
}
