// RUN: wsc-opt %s -split-input-file -verify-diagnostics --wsc-micro-batch=micro-batch=auto --wsc-assign-layouts | FileCheck %s
// RUN: wsc-opt %s -split-input-file --wsc-micro-batch=micro-batch=3 2>&1 | FileCheck %s --check-prefix=FORCED
// RUN: wsc-opt %s -split-input-file --wsc-micro-batch=micro-batch=100 2>&1 | FileCheck %s --check-prefix=MOVED
// RUN: not wsc-opt %s -split-input-file --wsc-micro-batch=micro-batch=0 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not wsc-opt %s -split-input-file --wsc-micro-batch=micro-batch=many 2>&1 | FileCheck %s --check-prefix=BAD-WORD
// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-form-kernels --wsc-select-mode=mode=weight_streaming --wsc-micro-batch=micro-batch=explore -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLORE
// RUN: wsc-opt %S/Inputs/mlp-mse-train.mlir --wsc-form-kernels --wsc-select-mode=mode=weight_streaming --wsc-micro-batch -o - 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: wsc-opt %S/../Translate/Inputs/deep-mlp-train.mlir --wsc-pipeline="mode=weight_streaming grid=1x1 stream-dtype=f32 micro-batch=explore offload-activations recompute=none" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFFLOAD
// RUN: wsc-opt %S/../Translate/Inputs/deep-mlp-train.mlir --wsc-pipeline="mode=weight_streaming grid=1x1 stream-dtype=f32 micro-batch=explore recompute=none" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RESIDENT
// RUN: wsc-opt %S/../Translate/Inputs/deep-mlp-train.mlir --wsc-pipeline="mode=weight_streaming stream-dtype=f32 micro-batch=explore" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STREAMS
// RUN: wsc-opt %S/../Translate/Inputs/deep-mlp-train.mlir --wsc-pipeline="mode=weight_streaming stream-dtype=f32 micro-batch=auto" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STREAMS
// RUN: wsc-opt %S/Inputs/mlp-large-batch-train.mlir --wsc-pipeline="mode=weight_streaming grid=1x1 stream-dtype=f32 micro-batch=explore" -o /dev/null 2>&1 | FileCheck %s --check-prefixes=KERNELS,KERNELS-EXPLORE
// RUN: wsc-opt %S/Inputs/mlp-large-batch-train.mlir --wsc-pipeline="mode=weight_streaming grid=1x1 stream-dtype=f32 micro-batch=auto" -o /dev/null 2>&1 | FileCheck %s --check-prefix=KERNELS
// RUN: wsc-opt %S/Inputs/mlp-large-batch-train.mlir --wsc-pipeline="mode=weight_streaming grid=1x1 stream-dtype=f32 systems=3 micro-batch=explore" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNEVEN

// Each kernel's tensors are whole on every PE: 32 kB per PE at the
// per-system batch of 8, so "a"'s result and "b"'s (64 kB) do not fit
// together. At 4 samples they take 16 kB each. Nothing here computes or
// streams, so every size that fits models the same step, and the tie goes
// to the larger: 4.
// CHECK-LABEL: module @fits_at_half
// CHECK-SAME: wsc.micro_batch = 4 : i64
// FORCED: remark: micro-batch 3 of 8 per system (forced)
// MOVED: remark: micro-batch=100 is more than the 8 samples each system runs; moved to 8
// MOVED: remark: micro-batch 8 of 8 per system (forced 100, moved to the whole batch)
// expected-remark @+1 {{micro-batch 4 of 8 per system (auto): modeled step 0.00 us (compute 0.00 us, stream 0.00 us, accumulate 0.00 us), peak SRAM 32768 of 49152 B/PE, streamed 0 B; the whole batch does not fit: the step's live values need 65536 bytes per PE at kernel 'b'}}
module @fits_at_half {
  func.func @step(%x: tensor<8x1024xf32> {wsc.input = 0 : i64}) -> tensor<8x1024xf32> {
    %0 = wsc.kernel "a" layer("a") phase(<forward>) (%x) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>], result_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>]} : (tensor<8x1024xf32>) -> tensor<8x1024xf32> {
    ^bb0(%a: tensor<8x1024xf32>):
      wsc.yield %a : tensor<8x1024xf32>
    }
    %1 = wsc.kernel "b" layer("b") phase(<forward>) (%0) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>], result_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>]} : (tensor<8x1024xf32>) -> tensor<8x1024xf32> {
    ^bb0(%a: tensor<8x1024xf32>):
      wsc.yield %a : tensor<8x1024xf32>
    }
    return %1 : tensor<8x1024xf32>
  }
}

// -----

// Values without a batch dim do not shrink with the micro-batch: three
// 16 kB results live at "d" with its own exceed PE SRAM at every size.
// auto takes 1, and wsc-assign-layouts says what does not fit there.
// expected-remark @+1 {{micro-batch 1 of 8 per system (auto): no candidate size fits PE SRAM; the smallest}}
module @never_fits {
  func.func @step(%x: tensor<8x4xf32> {wsc.input = 0 : i64}) -> tensor<4096xf32> {
    // expected-note @+1 {{result #0 of 'a': 16384 bytes per PE}}
    %0 = wsc.kernel "a" layer("a") phase(<forward>) (%x) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"], tiling = uneven>], result_layouts = [#wsc.layout<dims = ["h"], x = [], y = []>]} : (tensor<8x4xf32>) -> tensor<4096xf32> {
    ^bb0(%a: tensor<8x4xf32>):
      %e = tensor.empty() : tensor<4096xf32>
      wsc.yield %e : tensor<4096xf32>
    }
    // expected-note @+1 {{result #0 of 'b': 16384 bytes per PE}}
    %1 = wsc.kernel "b" layer("b") phase(<forward>) (%x) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"], tiling = uneven>], result_layouts = [#wsc.layout<dims = ["h"], x = [], y = []>]} : (tensor<8x4xf32>) -> tensor<4096xf32> {
    ^bb0(%a: tensor<8x4xf32>):
      %e = tensor.empty() : tensor<4096xf32>
      wsc.yield %e : tensor<4096xf32>
    }
    // expected-note @+1 {{result #0 of 'c': 16384 bytes per PE}}
    %2 = wsc.kernel "c" layer("c") phase(<forward>) (%x) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"], tiling = uneven>], result_layouts = [#wsc.layout<dims = ["h"], x = [], y = []>]} : (tensor<8x4xf32>) -> tensor<4096xf32> {
    ^bb0(%a: tensor<8x4xf32>):
      %e = tensor.empty() : tensor<4096xf32>
      wsc.yield %e : tensor<4096xf32>
    }
    // expected-note @+2 {{result #0 of 'd': 16384 bytes per PE}}
    // expected-error @+1 {{the step's live values need 65536 bytes per PE at kernel 'd', 16384 bytes over the 49152-byte PE SRAM}}
    %3 = wsc.kernel "d" layer("d") phase(<forward>) (%0, %1, %2) {operand_layouts = [#wsc.layout<dims = ["h"], x = [], y = []>, #wsc.layout<dims = ["h"], x = [], y = []>, #wsc.layout<dims = ["h"], x = [], y = []>], result_layouts = [#wsc.layout<dims = ["h"], x = [], y = []>]} : (tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32> {
    ^bb0(%a: tensor<4096xf32>, %b: tensor<4096xf32>, %c: tensor<4096xf32>):
      wsc.yield %a : tensor<4096xf32>
    }
    return %3 : tensor<4096xf32>
  }
}

// -----

// Layer-pipelined mode runs samples through its pipeline one at a time:
// nothing to choose.
// CHECK-LABEL: module @layer_pipelined
// CHECK-NOT: wsc.micro_batch
// expected-remark @+1 {{none: micro-batch=auto is for weight streaming; layer-pipelined mode already runs one sample at a time through its pipeline}}
module @layer_pipelined attributes {wsc.mode = #wsc.mode<layer_pipelined>} {
  func.func @step(%x: tensor<8x4xf32> {wsc.input = 0 : i64}) -> tensor<8x4xf32> {
    return %x : tensor<8x4xf32>
  }
}

// -----

// A step with no model input has no batch to split: nothing to choose.
// expected-remark @+1 {{none: micro-batch=auto, but the step has no batch to split (no model input)}}
module @no_batch {
  func.func @step(%w: tensor<8x4xf32> {wsc.param = "w"}) -> tensor<8x4xf32> {
    return %w : tensor<8x4xf32>
  }
}

// BAD: for the --micro-batch option: '0' is not a micro-batch size: expected none, auto, explore, or a number of samples N >= 1
// BAD-WORD: for the --micro-batch option: 'many' is not a micro-batch size: expected none, auto, explore, or a number of samples N >= 1

// explore: one remark per candidate, smallest first, then the choice. The
// MLP's 8 samples: every size fits; fewer micro-batches stream less and
// run fuller tiles, so the whole batch wins.
// EXPLORE: remark: candidate micro-batch 1: 8 per step, the last of 1; modeled step {{[0-9.]+}} us (compute {{[0-9.]+}} us, stream {{[0-9.]+}} us, accumulate {{[0-9.]+}} us), peak SRAM {{[0-9]+}} of 49152 B/PE, streamed 960 B
// EXPLORE: remark: candidate micro-batch 2: 4 per step, the last of 2; {{.*}} streamed 480 B
// EXPLORE: remark: candidate micro-batch 4: 2 per step, the last of 4; {{.*}} streamed 240 B
// EXPLORE: remark: candidate micro-batch 8: 1 per step, the last of 8; {{.*}} streamed 120 B
// EXPLORE: remark: micro-batch 8 of 8 per system (explore): modeled step
// EXPLORE-NOT: remark

// A 5-layer MLP on a 1x1 grid: its whole batch of 2 fits only with the
// activations for the backward pass kept in MemoryX. With
// offload-activations that size fits, costs their streams, and is faster
// than two micro-batches of 1; without, auto takes 1.
// The offloaded activations count in the streams: two micro-batches of 1
// stream the weights and gradients twice (117620800 B), one of 2 once
// (58810400 B) plus its 40992 B of activations out and back in.
// OFFLOAD: remark: candidate micro-batch 1: {{.*}}, peak SRAM 28676 of 49152 B/PE, streamed 117620800 B{{$}}
// OFFLOAD: remark: candidate micro-batch 2: {{.*}}, peak SRAM 32772 of 49152 B/PE, streamed 58892384 B, activations offloaded 40992 B, memory plan offload
// OFFLOAD: remark: micro-batch 2 of 2 per system (explore)
// OFFLOAD: remark: memory plan offload (recompute=none): of 6 activations kept for the backward pass, 0 stored, 0 recomputed, 6 offloaded; 40992 B stream to MemoryX and back each way
// RESIDENT: remark: candidate micro-batch 2: {{.*}}does not fit: the step's live values need 57348 bytes per PE at kernel '8.bwd'
// RESIDENT: remark: micro-batch 1 of 2 per system (explore)

// Stream-bound (the default grid): one micro-batch of 2 streams the
// weights once. auto does not model size 1, whose streams alone take
// longer than the step of 2 (branch and bound), and still chooses as
// explore does.
// STREAMS: remark: micro-batch 2 of 2 per system ({{auto|explore}}): modeled step 290.17 us (compute 32.68 us, stream 280.11 us

// 4096 samples on one PE: from 64 per micro-batch on, a kernel alone does
// not fit, which the size's first test finds without copying the step; the
// reason is the first kernel in program order that does not fit.
// KERNELS-EXPLORE: remark: candidate micro-batch 2: 2048 per step, the last of 2; modeled step {{.*}} (compute 30.940 ms,
// KERNELS-EXPLORE: remark: candidate micro-batch 4: 1024 per step, the last of 4; modeled step {{.*}} (compute 26.783 ms,
// KERNELS-EXPLORE: remark: candidate micro-batch 32: {{.*}} peak SRAM 32772 of 49152 B/PE
// KERNELS-EXPLORE: remark: candidate micro-batch 64: 64 per step, the last of 64; does not fit: kernel '2.bwd': no layout fits the 49152-byte PE SRAM; the smallest (fig15) needs 65536 bytes per PE
// KERNELS: remark: micro-batch 32 of 4096 per system ({{auto|explore}}): {{.*}}; the whole batch does not fit: kernel '0.fwd': no layout fits the 49152-byte PE SRAM; the smallest (fig15) needs 2097152 bytes per PE

// A last micro-batch smaller than the others is modeled at its own size.
// On 3 systems each runs 1366 of the 4096 samples: in micro-batches of 4,
// 341 full ones and a last of 2. A kernel's compute depends on its samples,
// not on the systems, so one pass of 4 takes 26.783 ms / 1024 and one of 2
// takes 30.940 ms / 2048 (KERNELS-EXPLORE, one system): 341 x 26.155 us +
// 15.107 us = 8.934 ms. Counting the last as a full one would give 8.945
// ms of compute and a step of 9.022 ms.
// UNEVEN: remark: candidate micro-batch 4: 342 per step, the last of 2; modeled step 9.011 ms (compute 8.934 ms, stream 2.216 ms, accumulate 0.02 us)

// none (the default) sets nothing and says nothing.
// NONE-NOT: micro-batch
// NONE-NOT: micro_batch

// -----

// On one system the all-reduces (inserted by wsc-sync-batch-statistics for
// micro-batches) make each micro-batch's statistics its own. auto keeps the
// whole batch here, so they go: one system sums one partial.
// CHECK-LABEL: module @one_system_whole_batch
// CHECK-NOT: wsc.swarmx.all_reduce
// CHECK: return %arg1
// expected-remark @+1 {{micro-batch 8 of 8 per system (auto)}}
module @one_system_whole_batch attributes {wsc.target = #wsc.target<systems = 1>} {
  func.func @step(%x: tensor<8x4xf32> {wsc.input = 0 : i64}, %p: tensor<4xf32>) -> tensor<4xf32> {
    %s = wsc.swarmx.all_reduce %p : tensor<4xf32>
    return %s : tensor<4xf32>
  }
}

