// RUN: wsc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{wafer grid sides must be in [1, 2^30], got 0x4}}
module attributes {wsc.target = #wsc.target<grid_x = 0, grid_y = 4>} {}

// -----

// expected-error @+1 {{wafer grid sides must be in [1, 2^30], got 4x4611686018427387904}}
module attributes {wsc.target = #wsc.target<grid_x = 4, grid_y = 4611686018427387904>} {}

// -----

// expected-error @+1 {{sram_per_pe must be in [1, 2^40], got -1}}
module attributes {wsc.target = #wsc.target<sram_per_pe = -1>} {}

// -----

// expected-error @+1 {{fmacs_per_pe and fabric_bytes_per_cycle must be positive}}
module attributes {wsc.target = #wsc.target<fmacs_per_pe = 0>} {}

// -----

// expected-error @+1 {{systems must be in [1, 2^20], got 0}}
module attributes {wsc.target = #wsc.target<systems = 0>} {}

// -----

// The runtime's bound (wsc/Support/Limits.h): refused here, not by wsc-run.
// expected-error @+1 {{systems must be in [1, 2^20], got 1048577}}
module attributes {wsc.target = #wsc.target<systems = 1048577>} {}

// -----

// expected-error @+1 {{swarmx_fanout must be at least 2, got 1}}
module attributes {wsc.target = #wsc.target<swarmx_fanout = 1>} {}

// -----

// expected-error @+1 {{clock_hz, io_bandwidth, memx_capacity and memx_flops must be finite and positive}}
module attributes {wsc.target = #wsc.target<io_bandwidth = 0.0>} {}

// -----

// expected-error @+1 {{clock_hz, io_bandwidth, memx_capacity and memx_flops must be finite and positive}}
module attributes {wsc.target = #wsc.target<clock_hz = 0x7FF0000000000000>} {}

// -----

// expected-error @+1 {{layout dims must be strings, got 1 : i64}}
module attributes {l = #wsc.layout<dims = [1], x = [], y = []>} {}

// -----

// expected-error @+1 {{layout x dims must be strings, got 1 : i64}}
module attributes {l = #wsc.layout<dims = ["b"], x = [1], y = []>} {}

// -----

// expected-error @+1 {{layout y dims must be strings, got 1 : i64}}
module attributes {l = #wsc.layout<dims = ["b"], x = [], y = [1]>} {}

// -----

// expected-error @+1 {{dim 'b' appears twice in dims}}
module attributes {l = #wsc.layout<dims = ["b", "b"], x = [], y = []>} {}

// -----

// expected-error @+1 {{x names unknown dim 'h'}}
module attributes {l = #wsc.layout<dims = ["b"], x = ["h"], y = []>} {}

// -----

// expected-error @+1 {{dim 'h' is mapped to both x and y}}
module attributes {l = #wsc.layout<dims = ["b", "h"], x = ["h"], y = ["h"]>} {}

// -----

// expected-error @+1 {{dim 'h' appears twice on x}}
module attributes {l = #wsc.layout<dims = ["b", "h"], x = ["h", "h"], y = []>} {}

// -----

// expected-error @+1 {{layout splits must be strings, got 4 : i64}}
module attributes {l = #wsc.layout<dims = ["b"], x = [], y = [], split = [4]>} {}

// -----

// expected-error @+1 {{layout split "b4" must be "dim:factor", e.g. "b:4"}}
module attributes {l = #wsc.layout<dims = ["b"], x = [], y = [], split = ["b4"]>} {}

// -----

// expected-error @+1 {{dim name 'b.0' is not an identifier}}
module attributes {l = #wsc.layout<dims = ["b.0"], x = [], y = []>} {}

// -----

// Figure 16 views the batch as two factors; the axes must name them.
// expected-error @+1 {{dim 'b' is split; y must name its factors 'b.0' and 'b.1'}}
module attributes {l = #wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"], split = ["b:2"]>} {}

// -----

// expected-error @+1 {{y names 'b.1', but dim 'b' is not split}}
module attributes {l = #wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b.1"]>} {}

// -----

// expected-error @+1 {{split names unknown dim 'q'}}
module attributes {l = #wsc.layout<dims = ["b"], x = [], y = [], split = ["q:2"]>} {}

// -----

// expected-error @+1 {{dim 'b' is split twice}}
module attributes {l = #wsc.layout<dims = ["b"], x = ["b.0"], y = ["b.1"], split = ["b:2", "b:4"]>} {}

// -----

// expected-error @+1 {{split factor of dim 'b' must be positive (got 0)}}
module attributes {l = #wsc.layout<dims = ["b"], x = ["b.0"], y = ["b.1"], split = ["b:0"]>} {}

// -----

// Every error is reported: the first as the error, the others as notes.
// expected-error @+2 {{x names unknown dim 'q'}}
// expected-note @+1 {{y names unknown dim 'r'}}
module attributes {l = #wsc.layout<dims = ["b"], x = ["q"], y = ["r"]>} {}

// -----

// expected-error @+2 {{expected one of [exact, pad, uneven]}}
// expected-error @+1 {{failed to parse WSC_LayoutAttr parameter 'tiling'}}
module attributes {l = #wsc.layout<dims = ["b"], x = [], y = ["b"], tiling = ragged>} {}

// -----

// expected-error @+1 {{rect origin must be non-negative, got (-1, 0)}}
module attributes {r = #wsc.rect<x = -1, y = 0, w = 1, h = 1>} {}

// -----

// expected-error @+1 {{rect extent must be positive, got 0x1}}
module attributes {r = #wsc.rect<x = 0, y = 0, w = 0, h = 1>} {}

// -----

// expected-error @+1 {{optimizer lr must be in [0, 1e21], got -1.000000e+00}}
module attributes {o = #wsc.optimizer<sgd, lr = -1.0>} {}

// -----

// expected-error @+1 {{optimizer weight_decay must be in [0, 1e21]}}
module attributes {o = #wsc.optimizer<adam, weight_decay = -1.0>} {}

// -----

// expected-error @+1 {{sgd momentum must be in [0, 1e21], got -5.000000e-01}}
module attributes {o = #wsc.optimizer<sgd, momentum = -0.5>} {}

// -----

// The schedule's bound on a figure (found by scripts/mutation-fuzz.py: wsc-run refused lr = 1e300).
// expected-error @+1 {{optimizer lr must be in [0, 1e21], got 1.000000e+300}}
module attributes {o = #wsc.optimizer<sgd, lr = 1.0e300>} {}

// -----

// expected-error @+1 {{sgd dampening must be in [-1e21, 1e21], got -INF}}
module attributes {o = #wsc.optimizer<sgd, dampening = 0xFFF0000000000000>} {}

// -----

// expected-error @+1 {{adam eps must be in [0, 1e21], got INF}}
module attributes {o = #wsc.optimizer<adam, eps = 0x7FF0000000000000>} {}

// -----

// expected-error @+1 {{sgd nesterov requires momentum > 0 and dampening = 0}}
module attributes {o = #wsc.optimizer<sgd, nesterov = true>} {}

// -----

// expected-error @+1 {{adam betas must lie in [0, 1), got (1.000000e+00, 9.990000e-01)}}
module attributes {o = #wsc.optimizer<adam, beta1 = 1.0>} {}

// -----

// expected-error @+1 {{adam eps must be in [0, 1e21], got -1.000000e+00}}
module attributes {o = #wsc.optimizer<adamw, eps = -1.0>} {}

// -----

// expected-error @+2 {{expected 'true' or 'false'}}
// expected-error @+1 {{failed to parse WSC_OptimizerAttr parameter 'nesterov' which is to be a `bool`}}
module attributes {o = #wsc.optimizer<sgd, nesterov = 1>} {}

// -----

// expected-error @+1 {{stream element type must be a float, i64 or i1, got 'i32'}}
func.func private @f(!wsc.stream<tensor<4xi32>>)

// -----

// expected-error @+1 {{stream shape must be static}}
func.func private @f(!wsc.stream<tensor<?xf16>>)

// -----

// expected-error @+1 {{parameter shape must be static}}
wsc.memx.param @w : tensor<?xf32> optimizer(<sgd>)

// -----

// expected-error @+1 {{parameters are kept as FP32 master weights, got element type 'f16'}}
wsc.memx.param @w : tensor<4xf16> optimizer(<sgd>)

// -----

// expected-error @+1 {{initial value of type 'tensor<2xf32>' does not match the parameter type 'tensor<4xf32>'}}
wsc.memx.param @w : tensor<4xf32> optimizer(<sgd>) initial_value(dense<1.0> : tensor<2xf32>)

// -----

func.func @f() {
  // expected-error @+1 {{references @missing, which is not a wsc.memx.param}}
  %s = wsc.memx.stream @missing order(<row_major>) : !wsc.stream<tensor<4xf16>>
  return
}

// -----

wsc.memx.param @w : tensor<4x3xf32> optimizer(<sgd>)
func.func @f() {
  // expected-error @+1 {{stream shape does not match parameter @w streamed in row_major order}}
  %s = wsc.memx.stream @w order(<row_major>) : !wsc.stream<tensor<3x4xf16>>
  return
}

// -----

wsc.memx.param @w : tensor<4xf32> optimizer(<sgd>)
func.func @f() {
  // expected-error @+1 {{transposed order needs a 2-D tensor, got rank 1}}
  %s = wsc.memx.stream @w order(<transposed>) : !wsc.stream<tensor<4xf16>>
  return
}

// -----

wsc.memx.param @w : tensor<4xf32> optimizer(<sgd>)
func.func @f(%g: !wsc.stream<tensor<4xf16>>) {
  // expected-error @+1 {{gradients reach MemoryX in FP32, got 'f16'}}
  wsc.memx.update @w(%g) : !wsc.stream<tensor<4xf16>>
  return
}

// -----

wsc.memx.param @w : tensor<4xf32> optimizer(<sgd>)
func.func @f(%g: !wsc.stream<tensor<5xf32>>) {
  // expected-error @+1 {{gradient shape does not match parameter @w}}
  wsc.memx.update @w(%g) : !wsc.stream<tensor<5xf32>>
  return
}

// -----

func.func @f(%g: tensor<4x3xf32>) {
  // expected-error @+1 {{stream shape does not match the partial gradient in transposed order}}
  %s = wsc.swarmx.reduce %g order(<transposed>) : tensor<4x3xf32> -> !wsc.stream<tensor<4x3xf32>>
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{transposed order needs a 2-D tensor, got rank 1}}
  %s = wsc.swarmx.reduce %g order(<transposed>) : tensor<4xf32> -> !wsc.stream<tensor<4xf32>>
  return
}

// -----

func.func @f(%g: tensor<4xf16>) {
  // expected-error @+1 {{SwarmX reduces gradients in FP32}}
  %s = wsc.swarmx.reduce %g order(<row_major>) : tensor<4xf16> -> !wsc.stream<tensor<4xf16>>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  %0 = wsc.kernel "outer" layer("outer") phase(<forward>) (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{is one of a step's ops: its parent must be a function, not 'wsc.kernel'}}
    %1 = wsc.kernel "inner" layer("inner") phase(<forward>) (%a) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%b: tensor<4xf32>):
      wsc.yield %b : tensor<4xf32>
    }
    wsc.yield %1 : tensor<4xf32>
  }
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{body has 0 arguments for 1 operands}}
  %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    wsc.yield %e : tensor<4xf32>
  }
  return
}

// -----

func.func @f(%s: !wsc.stream<tensor<4xf16>>) {
  // expected-error @+1 {{body argument #0 has type 'tensor<4xf16>' but operand #0 arrives as 'tensor<4xf32>'}}
  %0 = wsc.kernel "k" layer("k") phase(<forward>) (%s) : (!wsc.stream<tensor<4xf16>>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf16>):
    wsc.yield %a : tensor<4xf16>
  }
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{yields ('tensor<4xf32>') but returns ('tensor<5xf32>')}}
  %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) : (tensor<4xf32>) -> tensor<5xf32> {
  ^bb0(%a: tensor<4xf32>):
    wsc.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{has 2 operand layouts for 1 operands}}
  %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) {operand_layouts = [unit, unit]} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    wsc.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{result layout #0 must be a #wsc.layout or unit, got 1 : i64}}
  %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) {result_layouts = [1]} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    wsc.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @f(%s: !wsc.stream<tensor<4xf16>>) {
  // expected-error @+1 {{operand #0 is a stream and cannot have a layout}}
  %0 = wsc.kernel "k" layer("k") phase(<forward>) (%s) {operand_layouts = [#wsc.layout<dims = ["h"], x = ["h"], y = []>]} : (!wsc.stream<tensor<4xf16>>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    wsc.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{operand layout #0 names 2 dims for a rank-1 tensor}}
  %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = ["h"], y = []>]} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    wsc.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{layouts must name one dim per tensor dim (rank 1)}}
  %0 = wsc.layout_convert %x from(#wsc.layout<dims = ["b", "h"], x = [], y = []>) to(#wsc.layout<dims = ["h"], x = [], y = []>) : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{unknown kernel model kind "fft"}}
module attributes {m = #wsc.kernel_model<kind = "fft", formal = [1], exec = [1], cycles = 1, memory = 0>} {}

// -----

// expected-error @+1 {{formal args of "matmul": matmul takes 3 formal args, not 2}}
module attributes {m = #wsc.kernel_model<kind = "matmul", formal = [1, 3], exec = [1, 1, 1], cycles = 1, memory = 0>} {}

// -----

// expected-error @+1 {{execution args of "matmul":}}
module attributes {m = #wsc.kernel_model<kind = "matmul", formal = [1, 3, 4], exec = [1, 9, 1], cycles = 1, memory = 0>} {}

// -----

// expected-error @+1 {{cycles must be positive and memory non-negative, got 0 and 0}}
module attributes {m = #wsc.kernel_model<kind = "matmul", formal = [1, 3, 4], exec = [1, 1, 1], cycles = 0, memory = 0>} {}

// -----

// expected-error @+1 {{'wsc.wafer.param' op parameter shape must be static, got 'tensor<?xf32>'}}
wsc.wafer.param @w : tensor<?xf32> optimizer(<sgd>)

// -----

// expected-error @+1 {{'wsc.wafer.param' op parameters are kept as FP32 master weights, got element type 'f16'}}
wsc.wafer.param @w : tensor<4xf16> optimizer(<sgd>)

// -----

// expected-error @+1 {{'wsc.wafer.param' op initial value of type 'tensor<4xf16>' does not match the parameter type 'tensor<4xf32>'}}
wsc.wafer.param @w : tensor<4xf32> optimizer(<sgd>) initial_value(dense<1.0> : tensor<4xf16>)

// -----

wsc.memx.param @w : tensor<4xf32> optimizer(<sgd>)
func.func @f() {
  // expected-error @+1 {{references @w, which is not a wsc.wafer.param or wsc.wafer.buffer}}
  %w = wsc.wafer.weight @w : tensor<4xf32>
  return
}

// -----

wsc.wafer.param @w : tensor<4xf32> optimizer(<sgd>)
func.func @f() {
  // expected-error @+1 {{result type 'tensor<3xf32>' does not match parameter @w of type 'tensor<4xf32>'}}
  %w = wsc.wafer.weight @w : tensor<3xf32>
  return
}

// -----

wsc.wafer.param @w : tensor<4xf32> optimizer(<sgd>)
func.func @f(%g: tensor<2x2xf32>) {
  // expected-error @+1 {{gradient type 'tensor<2x2xf32>' does not match parameter @w of type 'tensor<4xf32>'}}
  wsc.wafer.update @w(%g) : tensor<2x2xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{references @missing, which is not a wsc.wafer.param}}
  wsc.wafer.update @missing(%g) : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{'wsc.wafer.buffer' op buffer shape must be static, got 'tensor<?xf32>'}}
wsc.wafer.buffer @m : tensor<?xf32>

// -----

// expected-error @+1 {{'wsc.wafer.buffer' op buffers are f32, i64 or i1 (float32, int64 or bool in PyTorch), got element type 'f16'}}
wsc.wafer.buffer @m : tensor<4xf16>

// -----

wsc.wafer.buffer @n : tensor<i64>
func.func @f() {
  // expected-error @+1 {{result type 'tensor<f32>' does not match buffer @n of type 'tensor<i64>'}}
  %n = wsc.wafer.weight @n : tensor<f32>
  return
}

// -----

wsc.wafer.buffer @m : tensor<4xf32>
func.func @f(%v: tensor<2xf32>) {
  // expected-error @+1 {{value type 'tensor<2xf32>' does not match buffer @m of type 'tensor<4xf32>'}}
  wsc.wafer.assign @m(%v) : tensor<2xf32>
  return
}

// -----

wsc.wafer.param @w : tensor<4xf32> optimizer(<sgd>)
func.func @f(%v: tensor<2xf32>) {
  // expected-error @+1 {{value type 'tensor<2xf32>' does not match parameter @w}}
  wsc.wafer.assign @w(%v) : tensor<2xf32>
  return
}

// -----

func.func @f(%v: tensor<4xf32>) {
  // expected-error @+1 {{references @w, which is not a wsc.wafer.buffer or wsc.wafer.param}}
  wsc.wafer.assign @w(%v) : tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{path must list at least two x, y points, got 3 coordinates}}
  %r = wsc.route %x from("a") to("b") path([0, 0, 1]) : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{path coordinate #3 is negative}}
  %r = wsc.route %x from("a") to("b") path([0, 0, 0, -1]) : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{path points #0 and #1 share neither a row nor a column}}
  %r = wsc.route %x from("a") to("b") path([0, 0, 2, 3]) : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @strip_seq_dim(%x: tensor<2x8x4xf32>, %m: tensor<2x8xi1>) {
  // expected-error @+1 {{seq_dim 3 is out of range for a rank-3 tensor; it must be in [1, 3)}}
  %s = wsc.strip_padding %x, %m {seq_dim = 3 : i64} : tensor<2x8x4xf32>, tensor<2x8xi1>
  return
}

// -----

func.func @restore_seq_dim_batch(%x: tensor<2x8x4xf32>, %m: tensor<2x8xi1>) {
  // expected-error @+1 {{seq_dim 0 is out of range for a rank-3 tensor; it must be in [1, 3)}}
  %s = wsc.restore_padding %x, %m {seq_dim = 0 : i64} : tensor<2x8x4xf32>, tensor<2x8xi1>
  return
}

// -----

func.func @strip_mask_rank(%x: tensor<2x8x4xf32>, %m: tensor<16xi1>) {
  // expected-error @+1 {{mask must be a [batch, seq] tensor, got rank 1}}
  %s = wsc.strip_padding %x, %m : tensor<2x8x4xf32>, tensor<16xi1>
  return
}

// -----

func.func @strip_mask_shape(%x: tensor<2x8x4xf32>, %m: tensor<2x4xi64>) {
  // expected-error @+1 {{mask shape [2, 4] does not match the input's batch and sequence dims [2, 8]}}
  %s = wsc.strip_padding %x, %m : tensor<2x8x4xf32>, tensor<2x4xi64>
  return
}

// -----

func.func @restore_mask_shape(%x: tensor<2x4x8xf32>, %m: tensor<2x4xf32>) {
  // expected-error @+1 {{mask shape [2, 4] does not match the input's batch and sequence dims [2, 8]}}
  %s = wsc.restore_padding %x, %m {seq_dim = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @strip_dynamic(%x: tensor<?x8x4xf32>, %m: tensor<?x8xi1>) {
  // expected-error @+1 {{needs static shapes}}
  %s = wsc.strip_padding %x, %m : tensor<?x8x4xf32>, tensor<?x8xi1>
  return
}

// -----

func.func @strip_mask_type(%x: tensor<2x8x4xf32>, %m: tensor<2x8xf16>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 1-bit signless integer or 64-bit signless integer or 32-bit signless integer or 32-bit float values}}
  %s = wsc.strip_padding %x, %m : tensor<2x8x4xf32>, tensor<2x8xf16>
  return
}

// -----

// expected-error @+1 {{threshold must be in [0, 1], got 1.5}}
module attributes {wsc.vts = #wsc.vts<threshold = 1.5>} {}

// -----

// expected-error @+1 {{ragged_work must be in [0, 1], got -5.000000e-01}}
module attributes {wsc.vts = #wsc.vts<ragged_work = -0.5>} {}

// -----

// expected-error @+1 {{density must be in (0, 1], got 1.5}}
wsc.memx.param @w : tensor<4x3xf32> optimizer(<sgd>) sparsity(<density = 1.5, source = "magnitude">)

// -----

// expected-error @+1 {{sparsity needs a source}}
wsc.memx.param @w : tensor<4x3xf32> optimizer(<sgd>) sparsity(<density = 0.5, source = "">)

// -----

// expected-error @+1 {{sparsity needs a 2-D parameter, got rank 1}}
wsc.memx.param @w : tensor<4xf32> optimizer(<sgd>) sparsity(<density = 0.5, source = "magnitude">)

// -----

wsc.memx.param @w : tensor<4x3xf32> optimizer(<sgd>)
func.func @f() {
  // expected-error @+1 {{streams parameter @w in csr format, but it has no sparsity}}
  %s = wsc.memx.stream @w order(<row_major>) format(<csr>) : !wsc.stream<tensor<4x3xf16>>
  return
}

// -----

wsc.memx.param @w : tensor<4x3xf32> optimizer(<sgd>) sparsity(<density = 0.5, source = "magnitude">)
func.func @f() {
  // expected-error @+1 {{a weight stream is dense or csr, not mask}}
  %s = wsc.memx.stream @w order(<row_major>) format(<mask>) : !wsc.stream<tensor<4x3xf16>>
  return
}

// -----

wsc.memx.param @w : tensor<4x3xf32> optimizer(<sgd>) sparsity(<density = 0.5, source = "magnitude">)
func.func @f(%g: tensor<4x3xf32>) {
  %r = wsc.swarmx.reduce %g order(<row_major>) : tensor<4x3xf32> -> !wsc.stream<tensor<4x3xf32>>
  // expected-error @+1 {{a gradient stream is dense or mask, not csr}}
  wsc.memx.update @w(%r) format(<csr>) : !wsc.stream<tensor<4x3xf32>>
  return
}

// -----

wsc.memx.param @w : tensor<4x3xf32> optimizer(<sgd>)
func.func @f(%g: tensor<4x3xf32>) {
  %r = wsc.swarmx.reduce %g order(<row_major>) : tensor<4x3xf32> -> !wsc.stream<tensor<4x3xf32>>
  // expected-error @+1 {{streams parameter @w in mask format, but it has no sparsity}}
  wsc.memx.update @w(%r) format(<mask>) : !wsc.stream<tensor<4x3xf32>>
  return
}

// -----

// expected-error @+1 {{buffer shape must be static, got 'tensor<?xf32>'}}
wsc.memx.buffer @m : tensor<?xf32>

// -----

// expected-error @+1 {{buffers are f32, i64 or i1 (float32, int64 or bool in PyTorch), got element type 'f16'}}
wsc.memx.buffer @m : tensor<4xf16>

// -----

wsc.memx.buffer @m : tensor<4xf32>
func.func @f() {
  // expected-error @+1 {{buffer @m streams row_major and dense}}
  %s = wsc.memx.stream @m order(<transposed>) : !wsc.stream<tensor<4xf32>>
  return
}

// -----

wsc.memx.buffer @m : tensor<4xf32>
func.func @f() {
  // expected-error @+1 {{stream type 'tensor<4xf16>' does not match buffer @m of type 'tensor<4xf32>'}}
  %s = wsc.memx.stream @m order(<row_major>) : !wsc.stream<tensor<4xf16>>
  return
}

// -----

wsc.memx.param @w : tensor<4xf32> optimizer(<sgd>)
func.func @f(%v: tensor<2xf32>) {
  // expected-error @+1 {{value type 'tensor<2xf32>' does not match parameter @w}}
  wsc.memx.assign @w(%v) : tensor<2xf32>
  return
}

// -----

func.func @f(%v: tensor<4xf32>) {
  // expected-error @+1 {{references @w, which is not a wsc.memx.buffer or wsc.memx.param}}
  wsc.memx.assign @w(%v) : tensor<4xf32>
  return
}

// -----

wsc.memx.buffer @m : tensor<4xf32>
func.func @f(%v: tensor<2xf32>) {
  // expected-error @+1 {{value type 'tensor<2xf32>' does not match buffer @m of type 'tensor<4xf32>'}}
  wsc.memx.assign @m(%v) : tensor<2xf32>
  return
}

// -----

func.func @f(%v: tensor<4xi64>) {
  // expected-error @+1 {{SwarmX sums in FP32, got element type 'i64'}}
  %s = wsc.swarmx.all_reduce %v : tensor<4xi64>
  return
}

// -----

wsc.memx.param @b : tensor<4xf32> optimizer(<sgd>)
func.func @f(%g: !wsc.stream<tensor<4xf32>>) {
  // expected-error @+1 {{a rows gradient stream needs a dense 2-D parameter's gradient in row_major order}}
  wsc.memx.update @b(%g) format(<rows>) : !wsc.stream<tensor<4xf32>>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'wsc.recompute' is a string (the kernel it recomputes) on a wsc.kernel}}
  %0 = arith.addf %x, %x {wsc.recompute = "a"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'wsc.recompute' is a string (the kernel it recomputes) on a wsc.kernel}}
  %0 = wsc.kernel "a.recompute" layer("a") phase(<forward>) (%x) {wsc.recompute = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    wsc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'wsc.recompute' recomputes a forward or loss kernel, but this kernel is in the backward phase}}
  %0 = wsc.kernel "a.recompute" layer("a") phase(<backward>) (%x) {wsc.recompute = "a"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    wsc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'wsc.offload' is an array<i64> of result numbers on a wsc.kernel or wsc.layout_convert}}
  %0 = arith.addf %x, %x {wsc.offload = array<i64: 0>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'wsc.offload' is an array<i64> of result numbers on a wsc.kernel or wsc.layout_convert}}
  %0 = wsc.kernel "a" layer("a") phase(<forward>) (%x) {wsc.offload = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    wsc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'wsc.offload' must list result numbers below 1 in increasing order, got 1}}
  %0 = wsc.kernel "a" layer("a") phase(<forward>) (%x) {wsc.offload = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    wsc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'wsc.offload' must list result numbers below 2 in increasing order, got 0}}
  %0:2 = wsc.kernel "a" layer("a") phase(<forward>) (%x) {wsc.offload = array<i64: 1, 0>} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    wsc.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}
