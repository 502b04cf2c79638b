// RUN: wsc-opt %s --wsc-assign-layouts -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not wsc-opt %s --wsc-assign-layouts=report -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not wsc-opt %s --wsc-assign-layouts=allow-sram-overflow -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=OVERFLOW

// The layout cost model (docs/Layouts.md) chooses each kernel's layouts on
// the CS-2 (924 x 920 PEs, 48 kB each, 4 FMACs per PE per cycle, 4-byte
// links). `report` gives each kernel's choice, its cycles by part, the
// runner-up, SRAM per PE and, as notes, every tensor's layout and tile.

#x = affine_map<(b, s, h1, h0) -> (b, s, h0)>
#w = affine_map<(b, s, h1, h0) -> (h1, h0)>
#y = affine_map<(b, s, h1, h0) -> (b, s, h1)>

// Figure 15: 4 x 2048 tokens and 12288 features are comparable; features
// over x, batch x seq over y, each sequence on adjacent rows. 9 tokens x 14
// features per PE: 387072 cycles of FMACs, partial sums of 9 x 12288 around
// the 924 columns (111516) and the weight's 12288 x 14 piece (86928) beat
// Figure 16's b:2, whose 27-feature pieces double the broadcast.
// CHECK-LABEL: func.func @fig15
// CHECK: wsc.kernel "fc.fwd"
// CHECK-SAME: operand_layouts = [#wsc.layout<dims = ["b", "s", "h0"], x = ["h0"], y = ["b", "s"], tiling = uneven>, #wsc.layout<dims = ["h1", "h0"], x = ["h0"], y = [], tiling = uneven>]
// CHECK-SAME: result_layouts = [#wsc.layout<dims = ["b", "s", "h1"], x = ["h1"], y = ["b", "s"], tiling = uneven>]
// REPORT: remark: fc.fwd: fig15 x=[h0] y=[b,s] on 924x920 PEs, 585516 cycles (compute 387072, reduce 111516, broadcast 86928, halo 0), SRAM 1008 B/PE; runner-up fig16 b:2, 643330 cycles
// REPORT: note: in0: dims=[b,s,h0] x=[h0] y=[b,s] pes=924x920 tiling=uneven, tile [1,9,14] 504 B
// REPORT: note: in1: dims=[h1,h0] x=[h0] y=[] pes=924x920 tiling=uneven, tile [12288,14] 344064 B (streamed)
// REPORT: note: out0: dims=[b,s,h1] x=[h1] y=[b,s] pes=924x920 tiling=uneven, tile [1,9,14] 504 B
func.func @fig15(%x: tensor<4x2048x12288xf32> {wsc.input = 0 : i64}, %w: tensor<12288x12288xf32> {wsc.param = "fc.weight"}) -> tensor<4x2048x12288xf32> {
  %y = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%x, %w) : (tensor<4x2048x12288xf32>, tensor<12288x12288xf32>) -> tensor<4x2048x12288xf32> {
  ^bb0(%a: tensor<4x2048x12288xf32>, %k: tensor<12288x12288xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x2048x12288xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2048x12288xf32>) -> tensor<4x2048x12288xf32>
    %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %k : tensor<4x2048x12288xf32>, tensor<12288x12288xf32>) outs(%f : tensor<4x2048x12288xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %m = arith.mulf %i, %j : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x2048x12288xf32>
    wsc.yield %r : tensor<4x2048x12288xf32>
  }
  return %y : tensor<4x2048x12288xf32>
}

// -----

// Figure 16: 1024 x 128 tokens far outnumber 256 features. Figure 15 would
// use 256 of the 924 columns; splitting the batch over both axes (32 groups
// of samples side by side along x, 32 samples down y) gives each PE a
// square-ish 5 x 10 tile. The kernel is the exporter's form: tokens
// flattened for a linalg.matmul against the transposed weight; the result
// leaves flattened, so its layout splits the flattened dim (b_s:32).
// CHECK-LABEL: func.func @fig16
// CHECK: wsc.kernel "fc.fwd"
// CHECK-SAME: operand_layouts = [#wsc.layout<dims = ["b", "s", "h0"], x = ["b.0", "h0"], y = ["b.1", "s"], split = ["b:32"], tiling = uneven>, #wsc.layout<dims = ["h1", "h0"], x = ["h0"], y = [], tiling = uneven>]
// CHECK-SAME: result_layouts = [#wsc.layout<dims = ["b_s", "h1"], x = ["b_s.0", "h1"], y = ["b_s.1"], split = ["b_s:32"], tiling = uneven>]
// REPORT: remark: fc.fwd: fig16 b:32 x=[b.0,h0] y=[b.1,s] on 924x920 PEs, 6620 cycles (compute 3200, reduce 1308, broadcast 2112, halo 0), SRAM 400 B/PE; runner-up fig16 b:16, 7289 cycles
// REPORT: note: in0: dims=[b,s,h0] split=[b:32] x=[b.0,h0] y=[b.1,s] pes=896x896 tiling=uneven, tile [1,5,10] 200 B
func.func @fig16(%x: tensor<1024x128x256xf32> {wsc.input = 0 : i64}, %w: tensor<256x256xf32> {wsc.param = "fc.weight"}) -> tensor<131072x256xf32> {
  %y = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%x, %w) : (tensor<1024x128x256xf32>, tensor<256x256xf32>) -> tensor<131072x256xf32> {
  ^bb0(%a: tensor<1024x128x256xf32>, %k: tensor<256x256xf32>):
    %zero = arith.constant 0.0 : f32
    %tokens = tensor.collapse_shape %a [[0, 1], [2]] : tensor<1024x128x256xf32> into tensor<131072x256xf32>
    %te = tensor.empty() : tensor<256x256xf32>
    %t = linalg.transpose ins(%k : tensor<256x256xf32>) outs(%te : tensor<256x256xf32>) permutation = [1, 0]
    %e = tensor.empty() : tensor<131072x256xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<131072x256xf32>) -> tensor<131072x256xf32>
    %r = linalg.matmul ins(%tokens, %t : tensor<131072x256xf32>, tensor<256x256xf32>) outs(%f : tensor<131072x256xf32>) -> tensor<131072x256xf32>
    wsc.yield %r : tensor<131072x256xf32>
  }
  return %y : tensor<131072x256xf32>
}

// -----

#tok_h1 = affine_map<(b, s, h0, h1) -> (b, s, h1)>
#w = affine_map<(b, s, h0, h1) -> (h1, h0)>
#tok_h0 = affine_map<(b, s, h0, h1) -> (b, s, h0)>
#dy = affine_map<(h1, h0, b, s) -> (b, s, h1)>
#x = affine_map<(h1, h0, b, s) -> (b, s, h0)>
#dw = affine_map<(h1, h0, b, s) -> (h1, h0)>

// Figure 17: the backward linear computes dx = dy . w, contracting H1, the
// features of its input dy. Figure 15 over dy puts H1 over x, so the
// weight w[H1, H0] arrives with H1 over x (forward: H0, see @fig15). dx
// lands where H1 was (7.3.1), and so does the stored input x that the
// weight gradient reads; dw leaves as the weight came.
// CHECK-LABEL: func.func @fig17
// CHECK: wsc.kernel "fc.bwd"
// CHECK-SAME: operand_layouts = [#wsc.layout<dims = ["b", "s", "h1"], x = ["h1"], y = ["b", "s"], tiling = uneven>, #wsc.layout<dims = ["b", "s", "h0"], x = ["h0"], y = ["b", "s"], tiling = uneven>, #wsc.layout<dims = ["h1", "h0"], x = ["h1"], y = [], tiling = uneven>]
// CHECK-SAME: result_layouts = [#wsc.layout<dims = ["b", "s", "h0"], x = ["h0"], y = ["b", "s"], tiling = uneven>, #wsc.layout<dims = ["h1", "h0"], x = ["h1"], y = [], tiling = uneven>]
// REPORT: remark: fc.bwd: fig15 x=[h1] y=[b,s] on 924x920 PEs, 758460 cycles (compute 387072, reduce 111516, broadcast 259872, halo 0), SRAM 1512 B/PE; runner-up fig16 b:2, 975926 cycles
// REPORT: note: in2: dims=[h1,h0] x=[h1] y=[] pes=924x920 tiling=uneven, tile [14,12288] 344064 B (streamed)
func.func @fig17(%x: tensor<4x2048x12288xf32> {wsc.input = 0 : i64}, %dy: tensor<4x2048x12288xf32>, %w: tensor<12288x12288xf32> {wsc.param = "fc.weight"}) -> (tensor<4x2048x12288xf32>, tensor<12288x12288xf32> {wsc.grad = "fc.weight"}) {
  %dx, %dw = wsc.kernel "fc.bwd" layer("fc") phase(<backward>) (%dy, %x, %w) : (tensor<4x2048x12288xf32>, tensor<4x2048x12288xf32>, tensor<12288x12288xf32>) -> (tensor<4x2048x12288xf32>, tensor<12288x12288xf32>) {
  ^bb0(%g: tensor<4x2048x12288xf32>, %a: tensor<4x2048x12288xf32>, %k: tensor<12288x12288xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x2048x12288xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2048x12288xf32>) -> tensor<4x2048x12288xf32>
    %gx = linalg.generic {indexing_maps = [#tok_h1, #w, #tok_h0], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%g, %k : tensor<4x2048x12288xf32>, tensor<12288x12288xf32>) outs(%f : tensor<4x2048x12288xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %m = arith.mulf %i, %j : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x2048x12288xf32>
    %we = tensor.empty() : tensor<12288x12288xf32>
    %wf = linalg.fill ins(%zero : f32) outs(%we : tensor<12288x12288xf32>) -> tensor<12288x12288xf32>
    %gw = linalg.generic {indexing_maps = [#dy, #x, #dw], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g, %a : tensor<4x2048x12288xf32>, tensor<4x2048x12288xf32>) outs(%wf : tensor<12288x12288xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %m = arith.mulf %i, %j : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<12288x12288xf32>
    wsc.yield %gx, %gw : tensor<4x2048x12288xf32>, tensor<12288x12288xf32>
  }
  return %dx, %dw : tensor<4x2048x12288xf32>, tensor<12288x12288xf32>
}

// -----

// Figure 26: a 3x3 convolution of 4 images of 1024 x 1024 pixels with 16
// channels in and out: width over x, batch x height over y, 5 x 2 pixels
// and all 16 channels per PE. Each PE needs every weight (its piece is the
// whole 16x16x3x3 filter) and one row or column of neighbours (halo 226).
// Splitting the channels instead (Figure 15's rule) would leave 16 of the
// 924 columns busy: 269197 cycles against 8470.
// CHECK-LABEL: func.func @fig26
// CHECK: wsc.kernel "conv.fwd"
// CHECK-SAME: operand_layouts = [#wsc.layout<dims = ["n", "ci", "h", "w"], x = ["w"], y = ["n", "h"], tiling = uneven>, #wsc.layout<dims = ["co", "ci", "kh", "kw"], x = [], y = [], tiling = uneven>]
// CHECK-SAME: result_layouts = [#wsc.layout<dims = ["n", "co", "h", "w"], x = ["w"], y = ["n", "h"], tiling = uneven>]
// REPORT: remark: conv.fwd: fig26 x=[w] y=[n,h] on 924x920 PEs, 8470 cycles (compute 5760, reduce 0, broadcast 2484, halo 226), SRAM 1280 B/PE; runner-up channels, 269197 cycles
// REPORT: note: in0: dims=[n,ci,h,w] x=[w] y=[n,h] pes=924x920 tiling=uneven, tile [1,16,5,2] 640 B
func.func @fig26(%x: tensor<4x16x1024x1024xf32> {wsc.input = 0 : i64}, %w: tensor<16x16x3x3xf32> {wsc.param = "conv.weight"}) -> tensor<4x16x1024x1024xf32> {
  %y = wsc.kernel "conv.fwd" layer("conv") phase(<forward>) (%x, %w) : (tensor<4x16x1024x1024xf32>, tensor<16x16x3x3xf32>) -> tensor<4x16x1024x1024xf32> {
  ^bb0(%a: tensor<4x16x1024x1024xf32>, %k: tensor<16x16x3x3xf32>):
    %zero = arith.constant 0.0 : f32
    %pe = tensor.empty() : tensor<4x16x1026x1026xf32>
    %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<4x16x1026x1026xf32>) -> tensor<4x16x1026x1026xf32>
    %p = tensor.insert_slice %a into %pf[0, 0, 1, 1] [4, 16, 1024, 1024] [1, 1, 1, 1] : tensor<4x16x1024x1024xf32> into tensor<4x16x1026x1026xf32>
    %e = tensor.empty() : tensor<4x16x1024x1024xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16x1024x1024xf32>) -> tensor<4x16x1024x1024xf32>
    %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<4x16x1026x1026xf32>, tensor<16x16x3x3xf32>) outs(%f : tensor<4x16x1024x1024xf32>) -> tensor<4x16x1024x1024xf32>
    wsc.yield %c : tensor<4x16x1024x1024xf32>
  }
  return %y : tensor<4x16x1024x1024xf32>
}

// -----

#x = affine_map<(b, s, h1, h0) -> (b, s, h0)>
#w = affine_map<(b, s, h1, h0) -> (h1, h0)>
#y = affine_map<(b, s, h1, h0) -> (b, s, h1)>

// A conversion only where it pays (FP16 activations, 256 x 128 tokens). A
// down-projection 8192 -> 256 is cheapest in b:2 (27982 cycles); a linear
// 256 -> 256 alone in b:16 (2729). Converting between them costs 5832
// cycles; with one such linear it saves 4928 - 2729 = 2199 cycles, so it
// runs in b:2 and nothing is converted.
// CHECK-LABEL: func.func @one_follower
// CHECK-NOT: wsc.layout_convert
// CHECK: return
// REPORT: remark: down: fig16 b:2 x=[b.0,h0] y=[b.1,s] on 924x920 PEs, 27982 cycles
// REPORT: remark: fc0: fig16 b:2 x=[b.0,h0] y=[b.1,s] on 924x920 PEs, 4928 cycles (compute 1216, reduce 2688, broadcast 1024, halo 0), SRAM 76 B/PE; runner-up fig16 b:16, 2729 cycles
func.func @one_follower(%x: tensor<256x128x8192xf16> {wsc.input = 0 : i64}, %wd: tensor<256x8192xf16> {wsc.param = "down.weight"}, %w0: tensor<256x256xf16> {wsc.param = "fc0.weight"}) -> tensor<256x128x256xf16> {
  %down = wsc.kernel "down" layer("down") phase(<forward>) (%x, %wd) : (tensor<256x128x8192xf16>, tensor<256x8192xf16>) -> tensor<256x128x256xf16> {
  ^bb0(%a: tensor<256x128x8192xf16>, %k: tensor<256x8192xf16>):
    %zero = arith.constant 0.0 : f16
    %e = tensor.empty() : tensor<256x128x256xf16>
    %f = linalg.fill ins(%zero : f16) outs(%e : tensor<256x128x256xf16>) -> tensor<256x128x256xf16>
    %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %k : tensor<256x128x8192xf16>, tensor<256x8192xf16>) outs(%f : tensor<256x128x256xf16>) {
    ^bb0(%p: f16, %q: f16, %acc: f16):
      %m = arith.mulf %p, %q : f16
      %t = arith.addf %acc, %m : f16
      linalg.yield %t : f16
    } -> tensor<256x128x256xf16>
    wsc.yield %r : tensor<256x128x256xf16>
  }
  %fc0 = wsc.kernel "fc0" layer("fc0") phase(<forward>) (%down, %w0) : (tensor<256x128x256xf16>, tensor<256x256xf16>) -> tensor<256x128x256xf16> {
  ^bb0(%a: tensor<256x128x256xf16>, %k: tensor<256x256xf16>):
    %zero = arith.constant 0.0 : f16
    %e = tensor.empty() : tensor<256x128x256xf16>
    %f = linalg.fill ins(%zero : f16) outs(%e : tensor<256x128x256xf16>) -> tensor<256x128x256xf16>
    %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %k : tensor<256x128x256xf16>, tensor<256x256xf16>) outs(%f : tensor<256x128x256xf16>) {
    ^bb0(%p: f16, %q: f16, %acc: f16):
      %m = arith.mulf %p, %q : f16
      %t = arith.addf %acc, %m : f16
      linalg.yield %t : f16
    } -> tensor<256x128x256xf16>
    wsc.yield %r : tensor<256x128x256xf16>
  }
  return %fc0 : tensor<256x128x256xf16>
}

// -----

#x = affine_map<(b, s, h1, h0) -> (b, s, h0)>
#w = affine_map<(b, s, h1, h0) -> (h1, h0)>
#y = affine_map<(b, s, h1, h0) -> (b, s, h1)>

// With four such linears the conversion saves 4 x 2199 cycles for 5832:
// one conversion after the down-projection, then all four run in b:16.
// CHECK-LABEL: func.func @four_followers
// CHECK: %[[DOWN:.*]] = wsc.kernel "down"
// CHECK: %[[C:.*]] = wsc.layout_convert %[[DOWN]] from(<dims = ["b", "s", "h1"], x = ["b.0", "h1"], y = ["b.1", "s"], split = ["b:2"], tiling = uneven>) to(<dims = ["b", "s", "h0"], x = ["b.0", "h0"], y = ["b.1", "s"], split = ["b:16"], tiling = uneven>)
// CHECK: wsc.kernel "fc0" {{.*}}(%[[C]],
// CHECK-NOT: wsc.layout_convert
// CHECK: return
// REPORT: remark: down: fig16 b:2 x=[b.0,h0] y=[b.1,s] on 924x920 PEs, 27982 cycles
// REPORT: remark: fc0: fig16 b:16 x=[b.0,h0] y=[b.1,s] on 924x920 PEs, 2729 cycles (compute 960, reduce 441, broadcast 1328, halo 0), SRAM 60 B/PE, after a conversion of 5832 cycles; runner-up fig16 b:8, 2931 cycles
// REPORT: remark: fc1: fig16 b:16 x=[b.0,h0] y=[b.1,s] on 924x920 PEs, 2729 cycles (compute 960, reduce 441, broadcast 1328, halo 0), SRAM 60 B/PE; runner-up
// REPORT: remark: fc3: fig16 b:16
func.func @four_followers(%x: tensor<256x128x8192xf16> {wsc.input = 0 : i64}, %wd: tensor<256x8192xf16> {wsc.param = "down.weight"}, %w0: tensor<256x256xf16> {wsc.param = "fc0.weight"}, %w1: tensor<256x256xf16> {wsc.param = "fc1.weight"}, %w2: tensor<256x256xf16> {wsc.param = "fc2.weight"}, %w3: tensor<256x256xf16> {wsc.param = "fc3.weight"}) -> tensor<256x128x256xf16> {
  %down = wsc.kernel "down" layer("down") phase(<forward>) (%x, %wd) : (tensor<256x128x8192xf16>, tensor<256x8192xf16>) -> tensor<256x128x256xf16> {
  ^bb0(%a: tensor<256x128x8192xf16>, %k: tensor<256x8192xf16>):
    %zero = arith.constant 0.0 : f16
    %e = tensor.empty() : tensor<256x128x256xf16>
    %f = linalg.fill ins(%zero : f16) outs(%e : tensor<256x128x256xf16>) -> tensor<256x128x256xf16>
    %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %k : tensor<256x128x8192xf16>, tensor<256x8192xf16>) outs(%f : tensor<256x128x256xf16>) {
    ^bb0(%p: f16, %q: f16, %acc: f16):
      %m = arith.mulf %p, %q : f16
      %t = arith.addf %acc, %m : f16
      linalg.yield %t : f16
    } -> tensor<256x128x256xf16>
    wsc.yield %r : tensor<256x128x256xf16>
  }
  %fc0 = wsc.kernel "fc0" layer("fc0") phase(<forward>) (%down, %w0) : (tensor<256x128x256xf16>, tensor<256x256xf16>) -> tensor<256x128x256xf16> {
  ^bb0(%a: tensor<256x128x256xf16>, %k: tensor<256x256xf16>):
    %zero = arith.constant 0.0 : f16
    %e = tensor.empty() : tensor<256x128x256xf16>
    %f = linalg.fill ins(%zero : f16) outs(%e : tensor<256x128x256xf16>) -> tensor<256x128x256xf16>
    %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %k : tensor<256x128x256xf16>, tensor<256x256xf16>) outs(%f : tensor<256x128x256xf16>) {
    ^bb0(%p: f16, %q: f16, %acc: f16):
      %m = arith.mulf %p, %q : f16
      %t = arith.addf %acc, %m : f16
      linalg.yield %t : f16
    } -> tensor<256x128x256xf16>
    wsc.yield %r : tensor<256x128x256xf16>
  }
  %fc1 = wsc.kernel "fc1" layer("fc1") phase(<forward>) (%fc0, %w1) : (tensor<256x128x256xf16>, tensor<256x256xf16>) -> tensor<256x128x256xf16> {
  ^bb0(%a: tensor<256x128x256xf16>, %k: tensor<256x256xf16>):
    %zero = arith.constant 0.0 : f16
    %e = tensor.empty() : tensor<256x128x256xf16>
    %f = linalg.fill ins(%zero : f16) outs(%e : tensor<256x128x256xf16>) -> tensor<256x128x256xf16>
    %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %k : tensor<256x128x256xf16>, tensor<256x256xf16>) outs(%f : tensor<256x128x256xf16>) {
    ^bb0(%p: f16, %q: f16, %acc: f16):
      %m = arith.mulf %p, %q : f16
      %t = arith.addf %acc, %m : f16
      linalg.yield %t : f16
    } -> tensor<256x128x256xf16>
    wsc.yield %r : tensor<256x128x256xf16>
  }
  %fc2 = wsc.kernel "fc2" layer("fc2") phase(<forward>) (%fc1, %w2) : (tensor<256x128x256xf16>, tensor<256x256xf16>) -> tensor<256x128x256xf16> {
  ^bb0(%a: tensor<256x128x256xf16>, %k: tensor<256x256xf16>):
    %zero = arith.constant 0.0 : f16
    %e = tensor.empty() : tensor<256x128x256xf16>
    %f = linalg.fill ins(%zero : f16) outs(%e : tensor<256x128x256xf16>) -> tensor<256x128x256xf16>
    %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %k : tensor<256x128x256xf16>, tensor<256x256xf16>) outs(%f : tensor<256x128x256xf16>) {
    ^bb0(%p: f16, %q: f16, %acc: f16):
      %m = arith.mulf %p, %q : f16
      %t = arith.addf %acc, %m : f16
      linalg.yield %t : f16
    } -> tensor<256x128x256xf16>
    wsc.yield %r : tensor<256x128x256xf16>
  }
  %fc3 = wsc.kernel "fc3" layer("fc3") phase(<forward>) (%fc2, %w3) : (tensor<256x128x256xf16>, tensor<256x256xf16>) -> tensor<256x128x256xf16> {
  ^bb0(%a: tensor<256x128x256xf16>, %k: tensor<256x256xf16>):
    %zero = arith.constant 0.0 : f16
    %e = tensor.empty() : tensor<256x128x256xf16>
    %f = linalg.fill ins(%zero : f16) outs(%e : tensor<256x128x256xf16>) -> tensor<256x128x256xf16>
    %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %k : tensor<256x128x256xf16>, tensor<256x256xf16>) outs(%f : tensor<256x128x256xf16>) {
    ^bb0(%p: f16, %q: f16, %acc: f16):
      %m = arith.mulf %p, %q : f16
      %t = arith.addf %acc, %m : f16
      linalg.yield %t : f16
    } -> tensor<256x128x256xf16>
    wsc.yield %r : tensor<256x128x256xf16>
  }
  return %fc3 : tensor<256x128x256xf16>
}

// -----

// An elementwise kernel broadcasting [b, s] to [b, s, h]: tokens over y,
// its result's features over x (Figure 15), so each PE row holds its
// tokens' inputs whole. The weight-shaped input is over none of its dims
// and keeps the default layout. Small tensors leave PEs empty:
// tiling=uneven.
// CHECK-LABEL: func.func @broadcast
// CHECK: wsc.kernel "k" {{.*}}operand_layouts = [#wsc.layout<dims = ["b", "s"], x = [], y = ["b", "s"], tiling = uneven>, #wsc.layout<dims = ["h1", "h"], x = ["h"], y = [], tiling = uneven>]
// CHECK-SAME: result_layouts = [#wsc.layout<dims = [], x = [], y = [], tiling = uneven>, #wsc.layout<dims = ["b", "s", "h"], x = ["h"], y = ["b", "s"], tiling = uneven>]
// REPORT: remark: k: fig15 x=[h] y=[b,s] on 924x920 PEs
func.func @broadcast(%x: tensor<8x4xf32> {wsc.input = 0 : i64}, %w: tensor<3x4xf32>) -> (tensor<f32>, tensor<8x4x3xf32>) {
  %0:2 = wsc.kernel "k" layer("k") phase(<forward>) (%x, %w) : (tensor<8x4xf32>, tensor<3x4xf32>) -> (tensor<f32>, tensor<8x4x3xf32>) {
  ^bb0(%a: tensor<8x4xf32>, %b: tensor<3x4xf32>):
    %s = tensor.empty() : tensor<f32>
    %t = tensor.empty() : tensor<8x4x3xf32>
    %v = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<8x4xf32>) outs(%t : tensor<8x4x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x4x3xf32>
    wsc.yield %s, %v : tensor<f32>, tensor<8x4x3xf32>
  }
  return %0#0, %0#1 : tensor<f32>, tensor<8x4x3xf32>
}

// -----

// A kernel without a structured op gives the model nothing to describe:
// default layouts (features, the last dim, over x; the batch and the other
// dims over y).
// CHECK-LABEL: func.func @defaults
// CHECK: wsc.kernel "copy" {{.*}}operand_layouts = [#wsc.layout<dims = ["b", "d1", "h"], x = ["h"], y = ["b", "d1"], tiling = uneven>]
// CHECK-SAME: result_layouts = [#wsc.layout<dims = ["b", "d1", "h"], x = ["h"], y = ["b", "d1"], tiling = uneven>]
// REPORT: remark: copy: layouts kept (default: no structured op over static tensors in its body), SRAM 8 B/PE
// REPORT: note: in0: dims=[b,d1,h] x=[h] y=[b,d1] pes=924x920 tiling=uneven, tile [1,1,1] 4 B
func.func @defaults(%x: tensor<8x4x3xf32> {wsc.input = 0 : i64}) -> tensor<8x4x3xf32> {
  %0 = wsc.kernel "copy" layer("copy") phase(<forward>) (%x) : (tensor<8x4x3xf32>) -> tensor<8x4x3xf32> {
  ^bb0(%a: tensor<8x4x3xf32>):
    wsc.yield %a : tensor<8x4x3xf32>
  }
  return %0 : tensor<8x4x3xf32>
}

// -----

// Given layouts are kept (and checked). A producer that left its result
// in another distribution gets a conversion before the consumer; the same
// distribution under other dim names gets none.
// CHECK-LABEL: func.func @convert
// CHECK: %[[A:.*]] = wsc.kernel "producer"
// CHECK: %[[C:.*]] = wsc.layout_convert %[[A]] from(<dims = ["b", "h"], x = ["b"], y = ["h"], tiling = uneven>) to(<dims = ["b", "h"], x = ["h"], y = ["b"], tiling = uneven>) : tensor<8x4xf32>
// CHECK: wsc.kernel "consumer" {{.*}}(%[[C]], %[[A]])
// REPORT: remark: producer: layouts kept (given), SRAM 8 B/PE
func.func @convert(%x: tensor<8x4xf32> {wsc.input = 0 : i64}) -> tensor<8x4xf32> {
  %0 = wsc.kernel "producer" layer("p") phase(<forward>) (%x) {result_layouts = [#wsc.layout<dims = ["b", "h"], x = ["b"], y = ["h"], tiling = uneven>]} : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    wsc.yield %a : tensor<8x4xf32>
  }
  %1 = wsc.kernel "consumer" layer("c") phase(<forward>) (%0, %0) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"], tiling = uneven>, #wsc.layout<dims = ["n", "f"], x = ["n"], y = ["f"], tiling = uneven>]} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>):
    wsc.yield %a : tensor<8x4xf32>
  }
  return %1 : tensor<8x4xf32>
}

// -----

// Given layouts are checked against the tensor's shape (one system's
// shard) and the kernel's PEs, with the cost model's verifier's messages.
module attributes {wsc.target = #wsc.target<grid_x = 4, grid_y = 3>} {
  func.func @does_not_divide(%x: tensor<1x100x8xf32> {wsc.input = 0 : i64}) -> tensor<1x100x8xf32> {
    // expected-error @+1 {{'wsc.kernel' op operand #0 layout #wsc.layout<dims = ["b", "seq", "h"], x = ["h"], y = ["seq"]>: dim 'seq' (size 100) does not divide over 3 PEs on y; use tiling=pad or tiling=uneven}}
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) {operand_layouts = [#wsc.layout<dims = ["b", "seq", "h"], x = ["h"], y = ["seq"]>]} : (tensor<1x100x8xf32>) -> tensor<1x100x8xf32> {
    ^bb0(%a: tensor<1x100x8xf32>):
      wsc.yield %a : tensor<1x100x8xf32>
    }
    return %0 : tensor<1x100x8xf32>
  }
}

// -----

module attributes {wsc.target = #wsc.target<grid_x = 4, grid_y = 8>} {
  func.func @does_not_fill(%x: tensor<3x8xf32> {wsc.input = 0 : i64}) -> tensor<3x8xf32> {
    // expected-error @+1 {{result #0 layout #wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"]>: dim 'b' (size 3) does not evenly fill 8 PEs on y; use tiling=pad or tiling=uneven}}
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) {result_layouts = [#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"]>]} : (tensor<3x8xf32>) -> tensor<3x8xf32> {
    ^bb0(%a: tensor<3x8xf32>):
      wsc.yield %a : tensor<3x8xf32>
    }
    return %0 : tensor<3x8xf32>
  }
}

// -----

module attributes {wsc.target = #wsc.target<grid_x = 4, grid_y = 2>} {
  func.func @split_does_not_divide(%x: tensor<6x8xf32> {wsc.input = 0 : i64}) -> tensor<6x8xf32> {
    // expected-error @+1 {{split factor 4 does not divide dim 'b' (size 6)}}
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = ["b.0"], y = ["b.1"], split = ["b:4"]>]} : (tensor<6x8xf32>) -> tensor<6x8xf32> {
    ^bb0(%a: tensor<6x8xf32>):
      wsc.yield %a : tensor<6x8xf32>
    }
    return %0 : tensor<6x8xf32>
  }
}

// -----

module attributes {wsc.target = #wsc.target<grid_x = 4, grid_y = 4>} {
  func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    // expected-error @+1 {{dim 'b' has size -1; layouts need positive static sizes}}
    %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"]>]} : (tensor<?x4xf32>) -> tensor<?x4xf32> {
    ^bb0(%a: tensor<?x4xf32>):
      wsc.yield %a : tensor<?x4xf32>
    }
    return %0 : tensor<?x4xf32>
  }
}

// -----

// A whole 64 x 4096 tensor on every PE: 1 MB against 48 kB.
func.func @given_overflows(%x: tensor<64x4096xf32> {wsc.input = 0 : i64}) -> tensor<64x4096xf32> {
  // expected-error @+1 {{per-PE tile of 1048576 bytes overflows the 49152-byte PE SRAM}}
  %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>]} : (tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  ^bb0(%a: tensor<64x4096xf32>):
    wsc.yield %a : tensor<64x4096xf32>
  }
  return %0 : tensor<64x4096xf32>
}

// -----

// A tensor dim on both axes is rejected where the attribute is written.
func.func @two_axes(%x: tensor<8x4xf32> {wsc.input = 0 : i64}) -> tensor<8x4xf32> {
  // expected-error @+1 {{dim 'h' is mapped to both x and y}}
  %0 = wsc.kernel "k" layer("k") phase(<forward>) (%x) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["h"]>]} : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    wsc.yield %a : tensor<8x4xf32>
  }
  return %0 : tensor<8x4xf32>
}

// -----

#x = affine_map<(b, s, h1, h0) -> (b, s, h0)>
#w = affine_map<(b, s, h1, h0) -> (h1, h0)>
#y = affine_map<(b, s, h1, h0) -> (b, s, h1)>

// 4 x 2048 tokens of 1024 features on a 2 x 2 wafer: every layout needs
// megabytes per PE. The error names the kernel and the smallest candidate;
// allow-sram-overflow takes that one with a warning instead.
// OVERFLOW: warning: kernel 'fc.fwd': no layout fits the 49152-byte PE SRAM; took the smallest ([[SMALLEST:.*]]), which needs {{[0-9]+}} bytes per PE
module attributes {wsc.target = #wsc.target<grid_x = 2, grid_y = 2>} {
  func.func @nothing_fits(%x: tensor<4x2048x1024xf32> {wsc.input = 0 : i64}, %w: tensor<1024x1024xf32> {wsc.param = "fc.weight"}) -> tensor<4x2048x1024xf32> {
    // expected-error @+1 {{kernel 'fc.fwd': no layout fits the 49152-byte PE SRAM; the smallest (}}
    %y = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%x, %w) : (tensor<4x2048x1024xf32>, tensor<1024x1024xf32>) -> tensor<4x2048x1024xf32> {
    ^bb0(%a: tensor<4x2048x1024xf32>, %k: tensor<1024x1024xf32>):
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4x2048x1024xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2048x1024xf32>) -> tensor<4x2048x1024xf32>
      %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %k : tensor<4x2048x1024xf32>, tensor<1024x1024xf32>) outs(%f : tensor<4x2048x1024xf32>) {
      ^bb0(%i: f32, %j: f32, %o: f32):
        %m = arith.mulf %i, %j : f32
        %s = arith.addf %o, %m : f32
        linalg.yield %s : f32
      } -> tensor<4x2048x1024xf32>
      wsc.yield %r : tensor<4x2048x1024xf32>
    }
    return %y : tensor<4x2048x1024xf32>
  }
}

// -----

// A declaration has no kernels to lay out.
// CHECK-LABEL: func.func private @declared
func.func private @declared(tensor<2xf32>) -> tensor<2xf32>

// -----

// Two batch dims on one tensor cannot be sharded.
func.func @two_batch_dims(%x: tensor<4x4xf32> {wsc.input = 0 : i64}) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  // expected-error @+1 {{a tensor would need two different batch dims}}
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %c = arith.addf %a, %b : f32
    linalg.yield %c : f32
  } -> tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// expected-error @+1 {{input 0 (argument #0) must be a tensor with a static, non-empty dim 0 (the batch)}}
func.func @scalar_input(%x: f32 {wsc.input = 0 : i64}) -> f32 {
  return %x : f32
}

// -----

// The batch is the smallest dim 0 (4); a larger one must be a multiple.
// expected-error @+1 {{label 0 (argument #1) has 5 rows in dim 0, not a multiple of the batch size 4 (the smallest dim 0 of the inputs and labels)}}
func.func @two_batches(%x: tensor<4x2xf32> {wsc.input = 0 : i64}, %y: tensor<5xi64> {wsc.label = 0 : i64}) -> tensor<4x2xf32> {
  return %x : tensor<4x2xf32>
}

// -----

// [batch, 3] merged into 12 elements and split as [6, 2] would put half a
// sample's elements in each of two dims.
func.func @split_batch(%x: tensor<4x3xf32> {wsc.input = 0 : i64}) -> tensor<6x2xf32> {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x3xf32> into tensor<12xf32>
  // expected-error @+1 {{a reshape splits the batch dim across two dims}}
  %e = tensor.expand_shape %c [[0, 1]] output_shape [6, 2] : tensor<12xf32> into tensor<6x2xf32>
  return %e : tensor<6x2xf32>
}

// -----

// [seq, batch] merged into one dim is fine inside the program, but a result
// is gathered from the systems by concatenation along its batch dim.
func.func @merged_result(%x: tensor<4x3xf32> {wsc.input = 0 : i64}) -> tensor<12xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
  // expected-error @+1 {{result #0 merges other data outside its batch in dim 0}}
  return %c : tensor<12xf32>
}

// -----

// A batch that stays the outermost part of its dim may leave the function.
// CHECK-LABEL: func.func @batch_outermost_result
// CHECK: tensor.expand_shape
func.func @batch_outermost_result(%x: tensor<4x3xf32> {wsc.input = 0 : i64}) -> (tensor<12xf32>, tensor<4x1x3xf32>) {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x3xf32> into tensor<12xf32>
  %e = tensor.expand_shape %c [[0, 1, 2]] output_shape [4, 1, 3] : tensor<12xf32> into tensor<4x1x3xf32>
  return %c, %e : tensor<12xf32>, tensor<4x1x3xf32>
}
