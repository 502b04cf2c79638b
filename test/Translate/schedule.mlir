// RUN: wsc-opt %S/../Transforms/Inputs/mlp-mse-train.mlir --wsc-pipeline="systems=3 stream-dtype=f32" -o %t.mlir 2>/dev/null
// RUN: wsc-translate --wsc-to-schedule %t.mlir | FileCheck %s
// RUN: not wsc-translate --wsc-to-schedule %s -split-input-file 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: "format": "wsc-schedule"
// CHECK: "global_batch": 8
// CHECK: "kind": "train"
// CHECK: "mode": "weight_streaming"
// CHECK: "name": "0.weight"
// CHECK: "steps": [
// CHECK: "op": "weight_stream"
// CHECK-NEXT: "order": "row_major"
// CHECK-NEXT: "param": "0.weight"
// The streams of later kernels are issued first (prefetches).
// CHECK: "order": "transposed"
// CHECK-NEXT: "param": "2.weight"
// CHECK: "name": "0.fwd"
// CHECK: "name": "linalg.generic"
// CHECK: "reduction"
// CHECK: "name": "loss"
// CHECK: "op": "gradient_stream"
// CHECK: "stream_dtype": "f32"
// CHECK: "systems": 3
// A prefetched stream waits on the wafer, spread over every PE: 1 byte.
// CHECK: "values": [
// CHECK: "id": 3,
// CHECK: "sram_bytes_per_pe": 1
// CHECK: "version": 1

// ERR: error: module has no 'wsc.mode'; run --wsc-pipeline first
module {
  func.func @f(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2xf32>
  }
}

// -----

// ERR: error: 'tensor.empty' op cannot be scheduled; expected wsc kernels, weight streams or reads, gradient streams or updates, buffer updates, all-reduces, routes, layout conversions and padding strips or restores only
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    %y = tensor.empty() : tensor<2xf32>
    return %y : tensor<2xf32>
  }
}

// -----

// ERR: error: expected exactly one function, found 2
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @f(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2xf32>
  }
  func.func @g(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2xf32>
  }
}
