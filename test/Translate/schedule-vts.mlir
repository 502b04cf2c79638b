// RUN: wsc-opt %S/Inputs/vts-token-mlp.mlir --wsc-pipeline="stream-dtype=f32 mode=weight_streaming vts=on" -o %t.mlir 2>/dev/null
// RUN: wsc-translate --wsc-to-schedule %t.mlir | FileCheck %s
// RUN: not wsc-translate --wsc-to-schedule %s -split-input-file 2>&1 | FileCheck %s --check-prefix=ERR

// The strip and restore are steps around the one ragged kernel; the kernel's
// tensors carry their ragged dims; vts=on strips at any valid fraction.
// CHECK: "op": "strip_padding"
// CHECK-NEXT: "operand": 0,
// CHECK-NEXT: "result": 2
// CHECK: "op": "kernel"
// CHECK: "ragged": 0
// CHECK: "op": "restore_padding"
// CHECK: "values": [
// CHECK: "id": 2,
// CHECK-NEXT: "ragged": {
// CHECK-NEXT: "dims": [
// CHECK-NEXT: 1
// CHECK-NEXT: ],
// CHECK-NEXT: "mask": 0
// CHECK: "vts": {
// CHECK-NEXT: "masks": [
// CHECK-NEXT: {
// CHECK-NEXT: "seq": 8,
// CHECK-NEXT: "value": 1
// CHECK: "threshold": 1

// ERR: error: 'wsc.strip_padding' op cannot run on valid tokens only: it strips a tensor that is already ragged
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @twice(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %m: tensor<2x8xi1> {wsc.input = 1 : i64})
      -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
    %s = wsc.strip_padding %x, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    %t = wsc.strip_padding %s, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    %r = wsc.restore_padding %t, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    return %r : tensor<2x8x4xf32>
  }
}

// -----

// ERR: error: 'func.return' op cannot run on valid tokens only: a function result needs the padded shape
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @unrestored(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %m: tensor<2x8xi1> {wsc.input = 1 : i64})
      -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
    %s = wsc.strip_padding %x, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    return %s : tensor<2x8x4xf32>
  }
}

// -----

// ERR: error: 'wsc.restore_padding' op cannot run on valid tokens only: it restores a tensor that is not ragged in exactly its seq_dim
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @dense_restore(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %m: tensor<2x8xi1> {wsc.input = 1 : i64})
      -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
    %s = wsc.strip_padding %x, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    %r = wsc.restore_padding %x, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    return %r : tensor<2x8x4xf32>
  }
}

// -----

// ERR: error: 'wsc.restore_padding' op cannot run on valid tokens only: its padded result is used as ragged
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @mixed(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %m: tensor<2x8xi1> {wsc.input = 1 : i64})
      -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
    %s = wsc.strip_padding %x, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    %r = wsc.restore_padding %s, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    %k = wsc.kernel "add" layer("add") phase(<forward>) (%s, %r) : (tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
    ^bb0(%a: tensor<2x8x4xf32>, %b: tensor<2x8x4xf32>):
      %e = tensor.empty() : tensor<2x8x4xf32>
      %y = linalg.add ins(%a, %b : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%e : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
      wsc.yield %y : tensor<2x8x4xf32>
    }
    %o = wsc.restore_padding %k, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    return %o : tensor<2x8x4xf32>
  }
}

// -----

// ERR: error: 'linalg.generic' op cannot run on valid tokens only: it indexes a ragged dim with a compound expression
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @shift(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %m: tensor<2x8xi1> {wsc.input = 1 : i64})
      -> (tensor<2x7x4xf32> {wsc.output = 0 : i64}) {
    %s = wsc.strip_padding %x, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    %k = wsc.kernel "shift" layer("shift") phase(<forward>) (%s) : (tensor<2x8x4xf32>) -> tensor<2x7x4xf32> {
    ^bb0(%a: tensor<2x8x4xf32>):
      %e = tensor.empty() : tensor<2x7x4xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1 + 1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                           iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%a : tensor<2x8x4xf32>) outs(%e : tensor<2x7x4xf32>) {
      ^bb0(%v: f32, %o: f32):
        linalg.yield %v : f32
      } -> tensor<2x7x4xf32>
      wsc.yield %y : tensor<2x7x4xf32>
    }
    return %k : tensor<2x7x4xf32>
  }
}

// -----

// ERR: error: 'wsc.restore_padding' op restores padding that no wsc.strip_padding removed
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @restore_only(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %m: tensor<2x8xi1> {wsc.input = 1 : i64})
      -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
    %r = wsc.restore_padding %x, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    return %r : tensor<2x8x4xf32>
  }
}

// -----

// ERR: error: 'linalg.generic' op cannot run on valid tokens only: it reads along the sequence through a window or a shift
module attributes {wsc.mode = #wsc.mode<weight_streaming>} {
  func.func @window(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}, %m: tensor<2x8xi1> {wsc.input = 1 : i64})
      -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
    %s = wsc.strip_padding %x, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    %k = wsc.kernel "next" layer("next") phase(<forward>) (%s) : (tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
    ^bb0(%a: tensor<2x8x4xf32>):
      %c = arith.constant dense<1.0> : tensor<9x4xf32>
      %e = tensor.empty() : tensor<2x8x4xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1 + 1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                           iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%a, %c : tensor<2x8x4xf32>, tensor<9x4xf32>) outs(%e : tensor<2x8x4xf32>) {
      ^bb0(%v: f32, %w: f32, %o: f32):
        %p = arith.mulf %v, %w : f32
        linalg.yield %p : f32
      } -> tensor<2x8x4xf32>
      wsc.yield %y : tensor<2x8x4xf32>
    }
    %r = wsc.restore_padding %k, %m : tensor<2x8x4xf32>, tensor<2x8xi1>
    return %r : tensor<2x8x4xf32>
  }
}
