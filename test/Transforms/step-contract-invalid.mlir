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

// ignore_index names a class to skip, among wsc.num_classes classes.
// (Found by mutation-fuzz: wsc.num_classes renamed.)
// expected-error @+1 {{argument #1: wsc.ignore_index needs wsc.num_classes (the classes the index is ignored among)}}
func.func @ignore_without_classes(%x: tensor<8x3xf32> {wsc.input = 0 : i64}, %y: tensor<8xi64> {wsc.label = 0 : i64, wsc.ignore_index = -100 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<8x3xf32>
}

// -----

// expected-error @+1 {{argument #1: wsc.num_classes needs integer class labels, got 'tensor<8xf32>'}}
func.func @classes_of_float_labels(%x: tensor<8x3xf32> {wsc.input = 0 : i64}, %y: tensor<8xf32> {wsc.label = 0 : i64, wsc.num_classes = 3 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
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

// Three breaks. The ops are checked in parallel, but the error is the one a
// walk over the step would give: the indexing-map rule is checked first,
// and only its first break is reported.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @first_break_is_reported(%ids: tensor<4xi64> {wsc.input = 0 : i64}, %x: tensor<4x3xf32> {wsc.input = 1 : i64}) -> (tensor<4xi64> {wsc.output = 0 : i64}, tensor<4x3xf32> {wsc.output = 1 : i64}, tensor<4x3xf32> {wsc.output = 2 : i64}) {
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4xi64>
  %q = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%ids : tensor<4xi64>) outs(%e : tensor<4xi64>) {
  ^bb0(%in: i64, %out: i64):
    %d = arith.floordivsi %in, %zero : i64
    linalg.yield %d : i64
  } -> tensor<4xi64>
  %init = tensor.empty() : tensor<4x3xf32>
  // expected-error @+1 {{'linalg.generic' op output #0's indexing map uses reduction loop d1; an output is indexed by parallel loops only}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x3xf32>) outs(%init : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "reduction"]} ins(%r : tensor<4x3xf32>) outs(%init : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %q, %r, %t : tensor<4xi64>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A batch of 0 samples.
// expected-error @+1 {{input 0 (argument #0) must be a tensor with a static, non-empty dim 0 (the batch)}}
func.func @batch0(%x: tensor<0x3xf32> {wsc.input = 0 : i64}) -> (tensor<0x3xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<0x3xf32>
}

// -----

// The classes below were found by scripts/mutation-fuzz.py: wsc-opt and
// wsc-translate accepted them and wsc-run refused the schedule.

// No argument carries the batch: the schedule's global_batch would be 0.
// expected-error @+1 {{global batch 0 is out of range [1, 2^40]: a step takes at least one sample, through an argument marked wsc.input or wsc.label}}
func.func @no_batch(%w: tensor<2xf32> {wsc.param = "w"}) -> (tensor<f32> {wsc.loss}) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// Two inputs numbered 0 would both be the schedule's 'input0'.
// expected-error @+1 {{argument #1: wsc.input 0 is already argument #0's; each has its own number}}
func.func @input_twice(%x: tensor<8x3xf32> {wsc.input = 0 : i64}, %z: tensor<8x3xf32> {wsc.input = 0 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<8x3xf32>
}

// -----

// expected-error @+1 {{argument #2: wsc.label 1 is already argument #1's; each has its own number}}
func.func @label_twice(%x: tensor<8x3xf32> {wsc.input = 0 : i64}, %y: tensor<8xi64> {wsc.label = 1 : i64}, %z: tensor<8xi64> {wsc.label = 1 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<8x3xf32>
}

// -----

// expected-error @+1 {{result #0 is the loss ({wsc.loss}) and must be a rank-0 f32 tensor, got 'tensor<8x3xf32>'}}
func.func @batched_loss(%x: tensor<8x3xf32> {wsc.input = 0 : i64}) -> (tensor<8x3xf32> {wsc.loss}) {
  return %x : tensor<8x3xf32>
}

// -----

// expected-error @+1 {{results #0 and #1 are both the loss ({wsc.loss}); a training step has one}}
func.func @two_losses(%x: tensor<8x3xf32> {wsc.input = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<f32> {wsc.loss}) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %c : tensor<f32>, tensor<f32>
}

// -----

// expected-error @+1 {{result #0 is a wsc.output, but a training step returns its loss (result #1) only}}
func.func @loss_and_output(%x: tensor<8x3xf32> {wsc.input = 0 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}, tensor<f32> {wsc.loss}) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %x, %c : tensor<8x3xf32>, tensor<f32>
}

// -----

// expected-error @+1 {{result #1 updates a buffer (wsc.buffer_update) but no result is the loss ({wsc.loss}); inference treats buffers as read-only}}
func.func @inference_updates_buffer(%m: tensor<2xf32> {wsc.buffer = "bn.running_mean"}, %x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}, tensor<2xf32> {wsc.buffer_update = "bn.running_mean"}) {
  return %x, %m : tensor<4x2xf32>, tensor<2xf32>
}

// -----

// MLIR's verifier reads reassociation indices as 32-bit dims (2^40 + 1 as
// 1); BatchDims, which every pass asks, checks them before following them.
func.func @reassociation_out_of_range(%x: tensor<2x8x4xf32> {wsc.input = 0 : i64}) -> (tensor<2x8x4xf32> {wsc.output = 0 : i64}) {
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x8x4xf32> into tensor<16x4xf32>
  // expected-error @+1 {{'tensor.expand_shape' op reassociation index 1099511627777 should be 1: the groups list the dims 0 to 2 in order}}
  %y = tensor.expand_shape %flat [[0, 1099511627777], [2]] output_shape [2, 8, 4] : tensor<16x4xf32> into tensor<2x8x4xf32>
  return %y : tensor<2x8x4xf32>
}

// -----

// arith leaves an integer division by zero undefined; wsc-run refuses it,
// so a constant zero divisor is refused here. (Found by mutation-fuzz.)
func.func @divides_by_constant_zero(%ids: tensor<4xi64> {wsc.input = 0 : i64}) -> (tensor<4xi64> {wsc.output = 0 : i64}) {
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4xi64>
  %q = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%ids : tensor<4xi64>) outs(%e : tensor<4xi64>) {
  ^bb0(%in: i64, %out: i64):
    // expected-error @+1 {{'arith.floordivsi' op divides by a constant zero; an integer divisor must not be 0}}
    %d = arith.floordivsi %in, %zero : i64
    linalg.yield %d : i64
  } -> tensor<4xi64>
  return %q : tensor<4xi64>
}

// -----

// A gather from a tensor with a batch dim (here a label): each system holds
// only its shard of it, so the runtime gathers only from shared tables.
// (Found by mutation-fuzz: wsc.param renamed to wsc.label.)
func.func @gathers_from_a_batched_tensor(%table: tensor<10x4xf32> {wsc.label = 0 : i64}, %ids: tensor<10xi64> {wsc.input = 0 : i64}) -> (tensor<10x4xf32> {wsc.output = 0 : i64}) {
  %e = tensor.empty() : tensor<10x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<10xi64>) outs(%e : tensor<10x4xf32>) {
  ^bb0(%id: i64, %out: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    // expected-error @+1 {{'tensor.extract' op gathers from a tensor with a batch dim (dim 0) at an index other than the batch loop's linalg.index; a gather reads its own sample's rows, or a table that every sample shares, such as a parameter}}
    %v = tensor.extract %table[%row, %col] : tensor<10x4xf32>
    linalg.yield %v : f32
  } -> tensor<10x4xf32>
  return %g : tensor<10x4xf32>
}

// -----

// linalg verifies that a map reaches far enough into an operand, not that it
// stays inside: a dilation of -1 verifies and reads input row -4. (Found by
// mutation-fuzz: torch-mlir's lenet5 with dilations 1 -> -1.)
func.func @reads_before_the_input(%x: tensor<1x1x32x32xf32> {wsc.input = 0 : i64}, %w: tensor<6x1x5x5xf32> {wsc.param = "w"}) -> (tensor<1x6x28x28xf32> {wsc.output = 0 : i64}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x28x28xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x28x28xf32>) -> tensor<1x6x28x28xf32>
  // expected-error @+1 {{'linalg.conv_2d_nchw_fchw' op operand #0 dim 2 (size 32) is accessed at indices [-4, 27] by its indexing map (d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 - d5, d3 - d6); every index must lie inside the operand}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<-1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x32x32xf32>, tensor<6x1x5x5xf32>) outs(%init : tensor<1x6x28x28xf32>) -> tensor<1x6x28x28xf32>
  return %y : tensor<1x6x28x28xf32>
}

// -----

// The same rule for a generic: linalg checks the first and the last point
// of the loops, here 0 and 3 - 2, but d0 = 0 with d1 = 2 reads index -2.
func.func @reads_before_the_input_between_the_corners(%x: tensor<4xf32> {wsc.input = 0 : i64}, %k: tensor<3xf32> {wsc.param = "k"}) -> (tensor<4x3xf32> {wsc.output = 0 : i64}) {
  %e = tensor.empty() : tensor<4x3xf32>
  // expected-error @+1 {{'linalg.generic' op operand #0 dim 0 (size 4) is accessed at indices [-2, 3] by its indexing map (d0, d1) -> (d0 - d1); every index must lie inside the operand}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 - d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %k : tensor<4xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%in: f32, %w: f32, %out: f32):
    %p = arith.mulf %in, %w : f32
    linalg.yield %p : f32
  } -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Within the rules: no error, only the mode remark.
// expected-remark @+1 {{mode layer_pipelined (auto)}}
module {
  func.func @fine(%x: tensor<8x3xf32> {wsc.input = 0 : i64}, %y: tensor<8xi64> {wsc.label = 0 : i64, wsc.num_classes = 1099511627776 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<8x3xf32>
  }
}

// -----

// Each of two systems holds a shard of the batch: a slice takes it whole.
// (On one system the piece holds those samples: the first sample of a
// batch, as a benchmark returns it.)
module attributes {wsc.target = #wsc.target<systems = 2>} {
  func.func @half_batch(%x: tensor<4x8xf32> {wsc.input = 0 : i64}) -> (tensor<4x8xf32> {wsc.output = 0 : i64}) {
    // expected-error @+1 {{'tensor.extract_slice' op takes part of the batch dim 0 (offset 0, size 2, stride 1 of 4); each of the 2 systems holds a shard of the batch, so a slice takes the batch dim whole unless one system runs the whole batch (systems=1)}}
    %s = tensor.extract_slice %x[0, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
    %r = tensor.insert_slice %s into %x[2, 0] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<4x8xf32>
    return %r : tensor<4x8xf32>
  }
}

// -----

// An op no pass lowers is refused by wsc-opt at that op, not left for
// wsc-translate to trip on (issue 40, class 10).
func.func @loop_over_tensors(%x: tensor<4x8xf32> {wsc.input = 0 : i64}) -> (tensor<4x8xf32> {wsc.output = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  // expected-error @+1 {{'scf.for' op is not supported by the wsc runtime (the schedule has no entry for it), and no wsc pass lowers it}}
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x) -> (tensor<4x8xf32>) {
    %e = tensor.empty() : tensor<4x8xf32>
    %s = linalg.add ins(%acc, %acc : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %s : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @loop_in_body(%x: tensor<4x8xf32> {wsc.input = 0 : i64}) -> (tensor<4x8xf32> {wsc.output = 0 : i64}) {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    // expected-error @+1 {{'scf.for' op is not supported by the wsc runtime (the schedule has no entry for it), and no wsc pass lowers it}}
    %s = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %a) -> (f32) {
      %t = arith.addf %acc, %acc : f32
      scf.yield %t : f32
    }
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A gather from a batched tensor by a loop other than the batch loop reads
// other samples' rows, which another system holds.
func.func @gathers_across_samples(%x: tensor<4x4xf32> {wsc.input = 0 : i64}) -> (tensor<4x4xf32> {wsc.output = 0 : i64}) {
  %e = tensor.empty() : tensor<4x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %row = linalg.index 1 : index
    %col = linalg.index 0 : index
    // expected-error @+1 {{'tensor.extract' op gathers from a tensor with a batch dim (dim 0) at an index other than the batch loop's linalg.index; a gather reads its own sample's rows, or a table that every sample shares, such as a parameter}}
    %v = tensor.extract %x[%row, %col] : tensor<4x4xf32>
    %s = arith.addf %in, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %g : tensor<4x4xf32>
}

// -----

// One input numbered 7: the schedule would name it 'input7', and the data
// files the exporter writes name it 'input0'.
// expected-error @+1 {{argument #0: wsc.input 7 is out of range: the function's 1 input is numbered from 0 to 0}}
func.func @input_number_gap(%x: tensor<8x3xf32> {wsc.input = 7 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<8x3xf32>
}

// -----

// expected-error @+1 {{argument #1: wsc.label -1 is out of range: the function's 2 labels are numbered from 0 to 1}}
func.func @label_negative(%x: tensor<8x3xf32> {wsc.input = 0 : i64}, %y: tensor<8xi64> {wsc.label = -1 : i64}, %z: tensor<8xi64> {wsc.label = 0 : i64}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<8x3xf32>
}

// -----

// A parameter's name is a string: reported at the argument that carries
// it, not at the wsc.memx.update a later pass makes of it.
// expected-error @+1 {{argument #1: wsc.param names the parameter with a non-empty string, got 3 : i64}}
func.func @param_not_a_string(%x: tensor<4x2xf32> {wsc.input = 0 : i64}, %w: tensor<2x2xf32> {wsc.param = 3 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<4x2xf32>
}

// -----

// expected-error @+1 {{argument #1: wsc.param names the parameter with a non-empty string, got ""}}
func.func @param_empty(%x: tensor<4x2xf32> {wsc.input = 0 : i64}, %w: tensor<2x2xf32> {wsc.param = ""}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<4x2xf32>
}

// -----

// expected-error @+1 {{argument #0: wsc.input is the argument's number among them, an integer, got "x"}}
func.func @input_number_not_an_integer(%x: tensor<8x3xf32> {wsc.input = "x"}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
  return %x : tensor<8x3xf32>
}

// -----

// A unit wsc.label is label 0: no error (-verify-diagnostics fails on any),
// the step goes on to its mode.
// expected-remark @+1 {{mode layer_pipelined (auto)}}
module {
  func.func @unit_label(%x: tensor<8x3xf32> {wsc.input = 0 : i64}, %y: tensor<8xi64> {wsc.label}) -> (tensor<8x3xf32> {wsc.output = 0 : i64}) {
    return %x : tensor<8x3xf32>
  }
}
