// RUN: wsc-opt %s --wsc-strip-instrumentation -split-input-file -verify-diagnostics | FileCheck %s

// A benchmark's @main driver (buddy-mlir's style) feeds constants to the
// model, times it with an external clock and prints the result: it returns
// nothing, so it is dropped, and the declarations only it used go too.
// CHECK-LABEL: func.func @forward(
// CHECK-NOT: func.func @main
// CHECK-NOT: rtclock
// CHECK-NOT: printMemrefF32
module {
  func.func private @printMemrefF32(tensor<*xf32>)
  func.func private @rtclock() -> f64
  func.func @forward(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
    return %x : tensor<1x8xf32>
  }
  // expected-remark @+1 {{returns nothing, so it is a driver and not a model: dropped}}
  func.func @main() {
    %cst = arith.constant dense<1.0> : tensor<1x8xf32>
    %0 = call @rtclock() : () -> f64
    %1 = call @forward(%cst) : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %2 = call @rtclock() : () -> f64
    %cast = tensor.cast %1 : tensor<1x8xf32> to tensor<*xf32>
    call @printMemrefF32(%cast) : (tensor<*xf32>) -> ()
    %3 = arith.subf %2, %0 : f64
    vector.print %3 : f64
    return
  }
}

// -----

// Timing calls inside the model, with their names as llvm.mlir.global
// strings: each call only observes, so it goes with what only it used.
// CHECK-LABEL: func.func @timed(
// CHECK-NEXT: linalg.generic
// CHECK-NOT: call
// CHECK-NOT: llvm.mlir
module {
  func.func private @record_timing(!llvm.ptr)
  func.func private @clock() -> i64
  llvm.mlir.global internal constant @layer0("layer0\00") {addr_space = 0 : i32}
  func.func @timed(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
    %p = llvm.mlir.addressof @layer0 : !llvm.ptr
    // expected-remark @+1 {{calls the external function @record_timing, which only observes the model: dropped}}
    call @record_timing(%p) : (!llvm.ptr) -> ()
    // expected-remark @+1 {{calls the external function @clock, which only observes the model: dropped}}
    %t0 = call @clock() : () -> i64
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%x : tensor<1x8xf32>) {
    ^bb0(%o: f32):
      %e = math.exp %o : f32
      linalg.yield %e : f32
    } -> tensor<1x8xf32>
    // expected-remark @+1 {{calls the external function @clock, which only observes the model: dropped}}
    %t1 = call @clock() : () -> i64
    %d = arith.subi %t1, %t0 : i64
    vector.print %d : i64
    return %0 : tensor<1x8xf32>
  }
}

// -----

// A module without declarations or drivers is left as it is.
// CHECK-LABEL: func.func @plain(
// CHECK-NEXT: return
func.func @plain(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}

// -----

// An external call whose result the model computes with cannot run.
func.func private @custom_kernel(tensor<1x8xf32>) -> tensor<1x8xf32>
func.func @uses_result(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'func.call' op calls the external function @custom_kernel, whose result the model's results depend on; wsc compiles what the module defines and runs no outside code}}
  %0 = call @custom_kernel(%x) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}
