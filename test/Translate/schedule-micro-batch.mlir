// The micro-batch the compiler chose (wsc.micro_batch) becomes the
// schedule's top-level "micro_batch_size", and its reason the report's
// "micro_batch"; without one the key is absent.
// RUN: wsc-opt %S/../Transforms/Inputs/mlp-mse-train.mlir --wsc-pipeline="mode=weight_streaming micro-batch=3" 2>/dev/null \
// RUN:   | wsc-translate --wsc-to-schedule | FileCheck %s
// RUN: wsc-opt %S/../Transforms/Inputs/mlp-mse-train.mlir --wsc-pipeline="mode=weight_streaming" 2>/dev/null \
// RUN:   | wsc-translate --wsc-to-schedule | FileCheck %s --check-prefix=NONE
// RUN: wsc-opt %S/../Transforms/Inputs/mlp-mse-train.mlir --wsc-pipeline="mode=weight_streaming micro-batch=auto" 2>/dev/null \
// RUN:   | wsc-translate --wsc-to-schedule | FileCheck %s --check-prefix=AUTO
// RUN: wsc-translate --wsc-to-schedule %s -split-input-file -verify-diagnostics >/dev/null

// CHECK: "micro_batch_size": 3,
// CHECK: "micro_batch": "micro-batch 3 of 8 per system (forced)",

// NONE-NOT: "micro_batch_size"
// NONE: "micro_batch": "",

// AUTO: "micro_batch_size": 8,
// AUTO: "micro_batch": "micro-batch 8 of 8 per system (auto): modeled step

// expected-error @+1 {{'wsc.micro_batch' must be an integer in [1, 8] (the samples each system runs), not 0 : i64}}
module attributes {wsc.mode = #wsc.mode<weight_streaming>, wsc.micro_batch = 0 : i64} {
  func.func @step(%x: tensor<8x4xf32> {wsc.input = 0 : i64}) -> (tensor<8x4xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<8x4xf32>
  }
}

// -----

// The schedule parser refuses a micro-batch larger than a system's shard.
// expected-error @+1 {{'wsc.micro_batch' must be an integer in [1, 4] (the samples each system runs), not 5 : i64}}
module attributes {wsc.mode = #wsc.mode<weight_streaming>, wsc.target = #wsc.target<systems = 2>, wsc.micro_batch = 5 : i64} {
  func.func @step(%x: tensor<8x4xf32> {wsc.input = 0 : i64}) -> (tensor<8x4xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<8x4xf32>
  }
}

// -----

// ... and more micro-batches per step than the timing model walks.
// expected-error @+1 {{'wsc.micro_batch' 1 makes 131072 micro-batches of the per-system batch 131072; a step takes at most 65536}}
module attributes {wsc.mode = #wsc.mode<weight_streaming>, wsc.micro_batch = 1 : i64} {
  func.func @step(%x: tensor<131072x4xf32> {wsc.input = 0 : i64}) -> (tensor<131072x4xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<131072x4xf32>
  }
}
