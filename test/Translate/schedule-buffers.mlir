// A conv + BatchNorm + linear training step on two systems: the BatchNorm
// buffers are MemoryX entries without an optimizer, streamed in their own
// dtype; the batch statistics are all-reduced between kernels, and the
// buffers' new values go back to MemoryX after the step's forward pass.
// RUN: wsc-opt %S/Inputs/conv-bn-train.mlir --wsc-pipeline="systems=2 stream-dtype=f32" 2>/dev/null \
// RUN:   | wsc-translate --wsc-to-schedule | FileCheck %s
// RUN: wsc-opt %S/Inputs/conv-bn-train.mlir --wsc-pipeline="mode=weight_streaming systems=1 stream-dtype=f32" 2>/dev/null \
// RUN:   | wsc-translate --wsc-to-schedule | FileCheck %s --check-prefix=ONE
// RUN: wsc-opt %S/Inputs/conv-bn-train.mlir --wsc-pipeline="mode=layer_pipelined" 2>/dev/null \
// RUN:   | wsc-translate --wsc-to-schedule | FileCheck %s --check-prefix=LP

// CHECK: "params": [
// CHECK: "buffer": true,
// CHECK-NEXT: "dtype": "f32",
// CHECK-NEXT: "name": "1.running_mean",
// CHECK: "buffer": true,
// CHECK-NEXT: "dtype": "f32",
// CHECK-NEXT: "name": "1.running_var",
// CHECK: "buffer": true,
// CHECK-NEXT: "dtype": "i64",
// CHECK-NEXT: "name": "1.num_batches_tracked",
// CHECK-NEXT: "shape": []
// CHECK: "steps": [
// CHECK: "op": "all_reduce",
// CHECK: "dtype": "i64",
// CHECK-NEXT: "format": "dense",
// CHECK-NEXT: "op": "weight_stream",
// CHECK-NEXT: "order": "row_major",
// CHECK-NEXT: "param": "1.num_batches_tracked",
// CHECK: "op": "buffer_update",
// CHECK-NEXT: "operand": {{[0-9]+}},
// CHECK-NEXT: "param": "1.running_mean"
// CHECK: "bytes": 8,
// CHECK-NEXT: "op": "buffer_update",
// CHECK-NEXT: "operand": {{[0-9]+}},
// CHECK-NEXT: "param": "1.num_batches_tracked"
// CHECK: "op": "all_reduce",
// CHECK: "op": "gradient_stream",

// One system sums the whole batch itself: no all-reduce, same buffers.
// ONE-NOT: "op": "all_reduce"
// ONE: "op": "buffer_update",
// ONE-NOT: "op": "all_reduce"

// Layer pipelined: the buffers are resident on the wafer, read in place in
// their own dtype and replaced in place; nothing streams or all-reduces.
// LP: "mode": "layer_pipelined",
// LP: "buffer": true,
// LP-NEXT: "dtype": "f32",
// LP-NEXT: "name": "1.running_mean",
// LP: "dtype": "i64",
// LP-NEXT: "name": "1.num_batches_tracked",
// LP-NOT: "op": "all_reduce"
// LP-NOT: "op": "weight_stream"
// LP: "op": "weight_read",
// LP: "param": "1.num_batches_tracked",
// LP-NEXT: "result":
// LP: "op": "buffer_update",
// LP-NEXT: "operand": {{[0-9]+}},
// LP-NEXT: "param": "1.running_mean"
