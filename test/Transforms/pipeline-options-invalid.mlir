// --wsc-pipeline's numeric options out of range are errors before any pass
// runs (issue 21: systems=0 became 1, nan and negative values were taken).
// RUN: not wsc-opt %s --wsc-pipeline="systems=0" 2>&1 | FileCheck %s --check-prefix=SYSTEMS
// RUN: not wsc-opt %s --wsc-pipeline="systems=1048577" 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: not wsc-opt %s --wsc-pipeline="time-limit=nan" 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not wsc-opt %s --wsc-pipeline="time-limit=inf" 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not wsc-opt %s --wsc-pipeline="time-limit=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not wsc-opt %s --wsc-pipeline="min-param-elements=-5" 2>&1 | FileCheck %s --check-prefix=MINPARAM
// RUN: not wsc-opt %s --wsc-place-kernels="time-limit=nan" 2>&1 | FileCheck %s --check-prefix=PASSNAN
// RUN: not wsc-opt %s --wsc-import-torch-mlir="min-param-elements=0" 2>&1 | FileCheck %s --check-prefix=PASSMIN
// RUN: wsc-opt %s --wsc-pipeline="systems=1 time-limit=0.5 min-param-elements=1" -o /dev/null

// SYSTEMS: error: wsc-pipeline: systems must be in [1, 2^20], got 0
// SYSTEMS-NOT: func.func
// MANY: error: wsc-pipeline: systems must be in [1, 2^20], got 1048577
// NAN: error: wsc-pipeline: time-limit must be a finite number of seconds > 0, got nan
// INF: error: wsc-pipeline: time-limit must be a finite number of seconds > 0, got INF
// ZERO: error: wsc-pipeline: time-limit must be a finite number of seconds > 0, got 0
// MINPARAM: error: wsc-pipeline: min-param-elements must be >= 1, got -5
// PASSNAN: error: time-limit must be a finite number of seconds > 0, got nan
// PASSMIN: error: min-param-elements must be >= 1, got 0

module attributes {wsc.mode = #wsc.mode<layer_pipelined>} {
  func.func @forward(%x: tensor<2x4xf32> {wsc.input = 0 : i64}) -> (tensor<2x4xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2x4xf32>
  }
}
