// RUN: wsc-opt %s --wsc-select-mode -split-input-file -verify-diagnostics
// RUN: not wsc-opt %s --wsc-pipeline="systems=9" -split-input-file 2>&1 | FileCheck %s --check-prefix=SYSTEMS

// What wsc-run would refuse in the schedule is refused by wsc-opt, at the
// argument or op at fault (issue 21, item 3).

// SYSTEMS: error: global batch 8 is smaller than systems=9: every system needs at least one sample

// expected-error @+1 {{argument #1: wsc.num_classes must be in [1, 2^40], got 0}}
func.func @no_classes(%x: tensor<8x3xf32> {wsc.input = 0 : i64}, %y: tensor<8xi64> {wsc.label = 0 : i64, wsc.num_classes = 0 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<8x3xf32>
}

// -----

// expected-error @+1 {{argument #1: wsc.num_classes must be in [1, 2^40], got 9223372036854775807}}
func.func @too_many_classes(%x: tensor<8x3xf32> {wsc.input = 0 : i64}, %y: tensor<8xi64> {wsc.label = 0 : i64, wsc.num_classes = 9223372036854775807 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<8x3xf32>
}

// -----

// expected-error @+1 {{result #1 is a gradient (wsc.grad) but no result is the loss ({wsc.loss}); a training step returns its loss}}
func.func @no_loss(%w: tensor<3xf32> {wsc.param = "w"}, %x: tensor<8x3xf32> {wsc.input = 0 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}, tensor<3xf32> {wsc.grad = "w"}) {
  return %x, %w : tensor<8x3xf32>, tensor<3xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @output_over_reduction(%x: tensor<8x3xf32> {wsc.input = 0 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
  %init = tensor.empty() : tensor<8x3xf32>
  // expected-error @+1 {{'linalg.generic' op output #0's indexing map uses reduction loop d1; an output is indexed by parallel loops only}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x3xf32>) outs(%init : tensor<8x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x3xf32>
  return %r : tensor<8x3xf32>
}

// -----

// A batch of 0 samples.
// expected-error @+1 {{input 0 (argument #0) must be a tensor with a static, non-empty dim 0 (the batch)}}
func.func @batch0(%x: tensor<0x3xf32> {wsc.input = 0 : i64}) -> (tensor<0x3xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<0x3xf32>
}

// -----

// Within the rules: no error, only the mode remark.
// expected-remark @+1 {{mode layer_pipelined (auto)}}
module {
  func.func @fine(%x: tensor<8x3xf32> {wsc.input = 0 : i64}, %y: tensor<8xi64> {wsc.label = 0 : i64, wsc.num_classes = 1099511627776 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<8x3xf32>
  }
}
