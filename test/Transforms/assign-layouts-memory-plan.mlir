// RUN: wsc-opt %s --wsc-assign-layouts=recompute=auto 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: wsc-opt %s --wsc-assign-layouts="recompute=selective offload-activations" 2>&1 | FileCheck %s --check-prefix=SELECTIVE
// RUN: not wsc-opt %s --wsc-assign-layouts -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not wsc-opt %s --wsc-assign-layouts=recompute=full -o /dev/null 2>&1 | FileCheck %s --check-prefix=FULL

// The memory plan (docs/MicroBatching.md, "Memory plan"). Each tensor takes
// 32 kB per PE (8 x 1024 floats, whole on every PE). "a" and "b" are
// forward kernels; "c" and "e", backward, read their results after "d" ran:
// stored, a's and b's results need 64 kB at "d".
// NONE: error: the step's live values need 65600 bytes per PE at kernel 'd'{{.*}}; recompute=auto (wsc.compile(recompute="auto")) makes it fit: memory plan offload, peak 32832 bytes per PE

// auto takes the fastest plan that fits: here the link is fast next to
// the compute of "a" and "b", and both results wait in MemoryX.
// AUTO: memory_plan = "memory plan offload (recompute=auto): of 2 activations kept for the backward pass, 0 stored, 0 recomputed, 2 offloaded; 65536 B stream to MemoryX and back each way per system and micro-batch; the step's peak goes from 65600 to 32832 bytes per PE"
// AUTO: wsc.kernel "a" {{.*}}wsc.offload = array<i64: 0>
// AUTO: wsc.kernel "b" {{.*}}wsc.offload = array<i64: 0>
// AUTO-NOT: recompute

// selective recomputes the cheapest per byte, as few as fit. "a" (one
// multiply per element) is cheaper than "b" (three), but recomputing it
// alone does not fit: its copy, before "c", is live with b's result. Both
// run again, each just before its reader, which reads the copy; the copy
// is named for the kernel it recomputes. Offloading is allowed and not used.
// SELECTIVE: memory_plan = "memory plan selective (recompute=selective): of 2 activations kept for the backward pass, 0 stored, 2 recomputed, 0 offloaded; 2 kernels and conversions run again before their backward readers ({{.*}} more compute per pass); the step's peak goes from 65600 to 32832 bytes per PE"
// SELECTIVE-LABEL: func.func @kept_for_backward
// SELECTIVE: wsc.kernel "a" layer("a") phase(<forward>)
// SELECTIVE: wsc.kernel "b" layer("b") phase(<forward>)
// SELECTIVE: wsc.kernel "d"
// SELECTIVE: %[[A2:.*]] = wsc.kernel "a.recompute" layer("a") phase(<forward>) (%arg0) {{.*}}wsc.recompute = "a"
// SELECTIVE: wsc.kernel "c" layer("a") phase(<backward>) (%[[A2]], %{{.*}})
// SELECTIVE: %[[B2:.*]] = wsc.kernel "b.recompute" layer("b") phase(<forward>) (%arg0) {{.*}}wsc.recompute = "b"
// SELECTIVE: wsc.kernel "e" layer("b") phase(<backward>) (%[[B2]], %{{.*}})

// full keeps the forward pass's checkpoint, b's result (what "d" reads),
// and recomputes "a" from the input: no better than storing everything.
// FULL: error: the step's live values need 65600 bytes per PE at kernel 'd'{{.*}}; recompute=auto (wsc.compile(recompute="auto")) makes it fit
func.func @kept_for_backward(%x: tensor<8x1024xf32> {wsc.input = 0 : i64}) -> (tensor<8x1024xf32> {wsc.grad = "w"}, tensor<8x1024xf32> {wsc.grad = "v"}) {
  %0 = wsc.kernel "a" layer("a") phase(<forward>) (%x) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>], result_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>]} : (tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  ^bb0(%a: tensor<8x1024xf32>):
    %e = tensor.empty() : tensor<8x1024xf32>
    %s = linalg.mul ins(%a, %a : tensor<8x1024xf32>, tensor<8x1024xf32>) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
    wsc.yield %s : tensor<8x1024xf32>
  }
  %1 = wsc.kernel "b" layer("b") phase(<forward>) (%x) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>], result_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>]} : (tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  ^bb0(%a: tensor<8x1024xf32>):
    %e = tensor.empty() : tensor<8x1024xf32>
    %m = linalg.mul ins(%a, %a : tensor<8x1024xf32>, tensor<8x1024xf32>) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
    %n = linalg.mul ins(%m, %a : tensor<8x1024xf32>, tensor<8x1024xf32>) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
    %s = linalg.mul ins(%n, %m : tensor<8x1024xf32>, tensor<8x1024xf32>) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
    wsc.yield %s : tensor<8x1024xf32>
  }
  %2 = wsc.kernel "d" layer("d") phase(<forward>) (%1) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>], result_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>]} : (tensor<8x1024xf32>) -> tensor<8x2xf32> {
  ^bb0(%a: tensor<8x1024xf32>):
    %s = tensor.extract_slice %a[0, 0] [8, 2] [1, 1] : tensor<8x1024xf32> to tensor<8x2xf32>
    wsc.yield %s : tensor<8x2xf32>
  }
  %3 = wsc.kernel "c" layer("a") phase(<backward>) (%0, %2) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>, #wsc.layout<dims = ["b", "h"], x = [], y = []>], result_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>]} : (tensor<8x1024xf32>, tensor<8x2xf32>) -> tensor<8x1024xf32> {
  ^bb0(%a: tensor<8x1024xf32>, %g: tensor<8x2xf32>):
    %e = tensor.empty() : tensor<8x1024xf32>
    %s = linalg.mul ins(%a, %a : tensor<8x1024xf32>, tensor<8x1024xf32>) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
    wsc.yield %s : tensor<8x1024xf32>
  }
  %4 = wsc.kernel "e" layer("b") phase(<backward>) (%1, %2) {operand_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>, #wsc.layout<dims = ["b", "h"], x = [], y = []>], result_layouts = [#wsc.layout<dims = ["b", "h"], x = [], y = []>]} : (tensor<8x1024xf32>, tensor<8x2xf32>) -> tensor<8x1024xf32> {
  ^bb0(%a: tensor<8x1024xf32>, %g: tensor<8x2xf32>):
    %e = tensor.empty() : tensor<8x1024xf32>
    %s = linalg.mul ins(%a, %a : tensor<8x1024xf32>, tensor<8x1024xf32>) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
    wsc.yield %s : tensor<8x1024xf32>
  }
  return %3, %4 : tensor<8x1024xf32>, tensor<8x1024xf32>
}
