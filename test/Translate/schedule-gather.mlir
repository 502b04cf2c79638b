// RUN: wsc-opt %S/Inputs/gather-slices.mlir --wsc-pipeline="systems=2" -o %t.mlir 2>/dev/null
// RUN: wsc-translate --wsc-to-schedule %t.mlir | FileCheck %s
// RUN: wsc-translate --wsc-to-schedule %t.mlir | %python -c "import json, sys; [print('value', v['shape'], 'batch_dim', v['batch_dim']) for v in json.load(sys.stdin)['values'] if len(v['shape']) > 1]" | FileCheck %s --check-prefix=BATCH

// The gather reads the table (a kernel operand) inside its region.
// CHECK: "op": "tensor.extract",
// CHECK-NEXT: "operands": [
// CHECK-NEXT: [[TABLE:[0-9]+]],
// CHECK-NEXT: {{[0-9]+}},
// CHECK-NEXT: {{[0-9]+}}
// CHECK-NEXT: ],

// The strided slice keeps its static offsets, sizes and strides.
// CHECK: "offsets": [
// CHECK-NEXT: 0,
// CHECK-NEXT: 1
// CHECK-NEXT: ],
// CHECK-NEXT: "op": "tensor.extract_slice",
// CHECK: "sizes": [
// CHECK-NEXT: 6,
// CHECK-NEXT: 2
// CHECK-NEXT: ],
// CHECK-NEXT: "strides": [
// CHECK-NEXT: 1,
// CHECK-NEXT: 2
// CHECK-NEXT: ]

// [seq, batch] merged into dim 0 still carries the batch in dim 0; the
// gather's output and the final transpose are batch-first, the middle
// [seq, batch, ...] tensors have it in dim 1.
// BATCH: value [2, 3] batch_dim 0
// BATCH: value [2, 3, 4] batch_dim 0
// BATCH: value [3, 2, 4] batch_dim 1
// BATCH: value [6, 4] batch_dim 0
// BATCH: value [6, 2] batch_dim 0
// BATCH: value [3, 2, 2] batch_dim 1
// BATCH: value [2, 3, 2] batch_dim 0
