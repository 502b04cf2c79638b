// RUN: wsc-opt %s --wsc-assign-layouts=report -o /dev/null 2>&1 | FileCheck %s

// A convolution at a small spatial size with many channels (issue #18):
// under Figure 26 a 16 x 16 map at batch 1 spans 256 PEs, each holding
// all 256 channels in and out. The search splits the summed input
// channels beside the width on x and the output channels before the rows
// on y, so the map and its channels spread over the wafer; it pays a ring
// reduction of partial sums and a copy of the input per channel group.
// (The unit batch is no dim.) Each PE holds one channel's 6 x 6 pixels in
// and out: 288 B instead of Figure 26's 2 kB, in 732 cycles.
// CHECK: remark: conv.fwd: fig26+ci+co x=[ci,w] y=[co,h] on 924x920 PEs, 732 cycles (compute 81, reduce 328, broadcast 296, halo 26), SRAM 288 B/PE; runner-up channels+co, 1054 cycles
// CHECK: note: in0: dims=[u0,ci,h,w] x=[ci,w] y=[h] pes=768x3 tiling=uneven, tile [1,1,6,6] 144 B
// CHECK: note: in1: dims=[co,ci,kh,kw] x=[ci] y=[co] pes=256x256 tiling=uneven, tile [1,1,3,3] 18 B (streamed)
// CHECK: note: out0: dims=[u0,co,h,w] x=[w] y=[co,h] pes=3x768 tiling=uneven, tile [1,1,6,6] 144 B
func.func @small_map(%x: tensor<1x256x16x16xf32> {wsc.input = 0 : i64}, %w: tensor<256x256x3x3xf32> {wsc.param = "conv.weight"}) -> tensor<1x256x16x16xf32> {
  %y = wsc.kernel "conv.fwd" layer("conv") phase(<forward>) (%x, %w) : (tensor<1x256x16x16xf32>, tensor<256x256x3x3xf32>) -> tensor<1x256x16x16xf32> {
  ^bb0(%a: tensor<1x256x16x16xf32>, %k: tensor<256x256x3x3xf32>):
    %zero = arith.constant 0.0 : f32
    %pe = tensor.empty() : tensor<1x256x18x18xf32>
    %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x256x18x18xf32>) -> tensor<1x256x18x18xf32>
    %p = tensor.insert_slice %a into %pf[0, 0, 1, 1] [1, 256, 16, 16] [1, 1, 1, 1] : tensor<1x256x16x16xf32> into tensor<1x256x18x18xf32>
    %e = tensor.empty() : tensor<1x256x16x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x256x16x16xf32>) -> tensor<1x256x16x16xf32>
    %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %k : tensor<1x256x18x18xf32>, tensor<256x256x3x3xf32>) outs(%f : tensor<1x256x16x16xf32>) -> tensor<1x256x16x16xf32>
    wsc.yield %c : tensor<1x256x16x16xf32>
  }
  return %y : tensor<1x256x16x16xf32>
}
