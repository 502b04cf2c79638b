// A label's wsc.ignore_index (a loss's ignore_index outside the classes,
// set by the exporter) is written into its input entry next to num_classes;
// the runtime accepts that value besides [0, num_classes)
// (test/Runtime/ignore-index.test). Without the attribute there is no key.
// RUN: sed 's/wsc.num_classes = 5 : i64/&, wsc.ignore_index = -100 : i64/' %S/Inputs/conv-bn-train.mlir \
// RUN:   | wsc-opt --wsc-pipeline="systems=1 stream-dtype=f32" 2>/dev/null \
// RUN:   | wsc-translate --wsc-to-schedule | FileCheck %s
// RUN: wsc-opt %S/Inputs/conv-bn-train.mlir --wsc-pipeline="systems=1 stream-dtype=f32" 2>/dev/null \
// RUN:   | wsc-translate --wsc-to-schedule | FileCheck %s --check-prefix=NONE

// CHECK:      "dtype": "i64",
// CHECK-NEXT: "ignore_index": -100,
// CHECK-NEXT: "name": "label0",
// CHECK-NEXT: "num_classes": 5,
// CHECK-NEXT: "role": "label",

// NONE:     "name": "label0",
// NONE-NOT: ignore_index
