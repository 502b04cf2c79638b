// The compile report: the passes' `wsc.report` module attribute becomes the
// schedule's "report", every entry present (empty when unknown).
// The last splits are malformed reports: the good ones still print.
// RUN: not wsc-translate --wsc-to-schedule %s -split-input-file 2>/dev/null | FileCheck %s
// RUN: wsc-translate --wsc-to-schedule %s -split-input-file -verify-diagnostics >/dev/null

// CHECK-LABEL: "function": "full"
// CHECK:      "report": {
// CHECK-NEXT:   "memory_plan": "",
// CHECK-NEXT:   "micro_batch": "",
// CHECK-NEXT:   "mode_reason": "weight_streaming: the model does not fit one wafer",
// CHECK-NEXT:   "placement_summary": "",
// CHECK-NEXT:   "vts_decision": "off: no sequence mask",
// CHECK-NEXT:   "warnings": [
// CHECK-NEXT:     "no layout of kernel 'fc1' fits in PE SRAM",
// CHECK-NEXT:     "stream-dtype f16 rounds the weights"
// CHECK-NEXT:   ]
// CHECK-NEXT: },
module attributes {wsc.mode = #wsc.mode<weight_streaming>,
    wsc.report = {mode = "weight_streaming: the model does not fit one wafer",
                  vts = "off: no sequence mask",
                  warnings = ["no layout of kernel 'fc1' fits in PE SRAM",
                              "stream-dtype f16 rounds the weights"]}} {
  func.func @full(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2xf32>
  }
}

// -----

// No report from the passes: the section is there, empty.
// CHECK-LABEL: "function": "none"
// CHECK:      "report": {
// CHECK-NEXT:   "memory_plan": "",
// CHECK-NEXT:   "micro_batch": "",
// CHECK-NEXT:   "mode_reason": "",
// CHECK-NEXT:   "placement_summary": "",
// CHECK-NEXT:   "vts_decision": "",
// CHECK-NEXT:   "warnings": []
// CHECK-NEXT: },
module attributes {wsc.mode = #wsc.mode<layer_pipelined>} {
  func.func @none(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2xf32>
  }
}

// -----

// expected-error @+1 {{'wsc.report' entry 'mode' must be a string, got 3 : i64}}
module attributes {wsc.mode = #wsc.mode<weight_streaming>, wsc.report = {mode = 3 : i64}} {
  func.func @f(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2xf32>
  }
}

// -----

// expected-error @+1 {{'wsc.report' entry 'warnings' must be a list of strings, got ["ok", 1]}}
module attributes {wsc.mode = #wsc.mode<weight_streaming>, wsc.report = {warnings = ["ok", 1 : i64]}} {
  func.func @f(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2xf32>
  }
}

// -----

// expected-error @+1 {{'wsc.report' must be a dictionary, got "mode"}}
module attributes {wsc.mode = #wsc.mode<weight_streaming>, wsc.report = "mode"} {
  func.func @f(%x: tensor<2xf32> {wsc.input = 0 : i64}) -> (tensor<2xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<2xf32>
  }
}
