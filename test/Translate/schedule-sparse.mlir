// RUN: wsc-opt %S/../Transforms/Inputs/mlp-sparse-train.mlir --wsc-pipeline=mode=weight_streaming -o %t.mlir 2>/dev/null
// RUN: wsc-translate --wsc-to-schedule %t.mlir | FileCheck %s

// A sparse parameter carries its compile-time density and mask source.
// CHECK: "name": "0.weight",
// CHECK: "sparsity": {
// CHECK-NEXT: "density": 0.104,
// CHECK-NEXT: "source": "explicit"
// CHECK: "name": "2.weight",
// CHECK: "sparsity": {
// CHECK-NEXT: "density": 0.922

// The CSR stream of 0.weight: floor(0.104 * 64 * 64) = 425 entries of an FP16
// value and a 16-bit delta, plus a 4-byte count for each of the 64 rows.
// CHECK: "steps": [
// CHECK-NEXT: {
// CHECK-NEXT: "bytes": 1956,
// CHECK-NEXT: "dtype": "f16",
// CHECK-NEXT: "format": "csr",
// CHECK-NEXT: "op": "weight_stream",
// CHECK-NEXT: "order": "row_major",
// CHECK-NEXT: "param": "0.weight"
// 2.weight is dense enough to stream dense: 10 * 64 FP16 values.
// CHECK: "bytes": 1280,
// CHECK-NEXT: "dtype": "f16",
// CHECK-NEXT: "format": "dense",
// CHECK-NEXT: "op": "weight_stream",
// CHECK-NEXT: "order": "row_major",
// CHECK-NEXT: "param": "2.weight"

// The forward kernel's contraction runs at the active weights only; the
// rest of the kernel (bias, ReLU) does not shrink.
// CHECK: "cost": {
// CHECK-NEXT: "cycles":
// CHECK-NEXT: "density": 0.83
// CHECK: "name": "0.fwd"

// Gradients in mask order: 4 bytes per active weight, floor(0.922 * 640) =
// 590 for 2.weight and 425 for 0.weight.
// CHECK: "bytes": 2360,
// CHECK-NEXT: "format": "mask",
// CHECK-NEXT: "op": "gradient_stream",
// CHECK: "param": "2.weight"
// CHECK: "bytes": 40,
// CHECK-NEXT: "format": "dense",
// CHECK: "param": "2.bias"
// CHECK: "bytes": 1700,
// CHECK-NEXT: "format": "mask",
// CHECK-NEXT: "op": "gradient_stream",
// CHECK: "param": "0.weight"
