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

// A gather from the batched input itself, by the batch loop's linalg.index
// (torch-mlir's adaptive pooling), compiles on two systems: each reads its
// own samples' rows.
// RUN: wsc-opt %S/Inputs/adaptive-pool.mlir --wsc-pipeline="systems=2" -o %t.pool.mlir 2>/dev/null
// RUN: wsc-translate --wsc-to-schedule %t.pool.mlir | %python -c "import json, sys; d = json.load(sys.stdin); v = {x['id']: x for x in d['values']}; [print('gather from', v[o['operands'][0]]['shape'], 'batch_dim', v[o['operands'][0]].get('batch_dim')) for s in d['steps'] if s['op'] == 'kernel' for b in s['body']['ops'] if b['op'] == 'linalg' for o in b['region']['ops'] if o['op'] == 'tensor.extract']" | FileCheck %s --check-prefix=POOL
// POOL: gather from [4, 2, 3, 3] batch_dim 0
