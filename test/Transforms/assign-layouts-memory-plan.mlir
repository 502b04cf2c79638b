// RUN: wsc-opt %s --wsc-assign-layouts=recompute=auto 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: wsc-opt %s --wsc-assign-layouts="recompute=selective offload-activations" 2>&1 | FileCheck %s --check-prefix=SELECTIVE
// RUN: not wsc-opt %s --wsc-assign-layouts -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not wsc-opt %s --wsc-assign-layouts=recompute=full -o /dev/null 2>&1 | FileCheck %s --check-prefix=FULL

// The memory plan (docs/MicroBatching.md, "Memory plan"). Each tensor takes
// 32 kB per PE (8 x 1024 floats, whole on every PE). "a" and "b" are
// forward kernels; "c" and "e", backward, read their results after "d" ran:
// stored, a's and b's results need 64 kB at "d".
// NONE: error: the step's live values need 65600 bytes per PE at kernel 'd'{{.*}}; recompute=auto (wsc.compile(recompute="auto")) makes it fit: memory plan selective, peak 32832 bytes per PE

// auto takes the cheapest plan that fits. "a" (one multiply per element)
// is cheaper to recompute per byte than "b" (three), but recomputing it
// alone does not fit: its copy, before "c", is live with b's result. Both
// run again, each just before its reader, which reads the copy; the copy
// is named for the kernel it recomputes.
// AUTO: memory_plan = "memory plan selective (recompute=auto): of 2 activations kept for the backward pass, 0 stored, 2 recomputed, 0 offloaded; 2 kernels and conversions run again before their backward readers ({{.*}} more compute per pass); the step's peak goes from 65600 to 32832 bytes per PE"
// AUTO-LABEL: func.func @kept_for_backward
// AUTO: wsc.kernel "a" layer("a") phase(<forward>)
// AUTO: wsc.kernel "b" layer("b") phase(<forward>)
// AUTO: wsc.kernel "d"
// AUTO: %[[A2:.*]] = wsc.kernel "a.recompute" layer("a") phase(<forward>) (%arg0) {{.*}}wsc.recompute = "a"
// AUTO: wsc.kernel "c" layer("a") phase(<backward>) (%[[A2]], %{{.*}})
// AUTO: %[[B2:.*]] = wsc.kernel "b.recompute" layer("b") phase(<forward>) (%arg0) {{.*}}wsc.recompute = "b"
// AUTO: wsc.kernel "e" layer("b") phase(<backward>) (%[[B2]], %{{.*}})

// selective is the same plan here; offloading is allowed, and slower.
// SELECTIVE: memory_plan = "memory plan selective (recompute=selective): of 2 activations kept for the backward pass, 0 stored, 2 recomputed, 0 offloaded

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
