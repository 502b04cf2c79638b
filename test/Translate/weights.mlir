// RUN: wsc-translate --wsc-to-weights %s -o %t.safetensors
// RUN: %python -c "import sys; from wsc import safetensors as s; w = s.load(sys.argv[1]); print(sorted(w)); print(w['a'].tolist()); print(w['b'].tolist()); print(w['c'].tolist())" %t.safetensors | FileCheck %s
// RUN: wsc-translate --wsc-to-weights %S/Inputs/weights-errors.mlir -split-input-file -verify-diagnostics

// Both parameter kinds, a dense, a dense_resource and a splat initial value
// (stripped weights are splats: written out whole); the module's other ops
// do not matter.
// CHECK: ['a', 'b', 'c']
// CHECK: {{\[\[}}1.0, 2.0], [3.0, 4.0]]
// CHECK: [1.0, 2.0]
// CHECK: {{\[\[}}1.5, 1.5, 1.5], [1.5, 1.5, 1.5]]
module {
  wsc.memx.param @a : tensor<2x2xf32> optimizer(<sgd, lr = 0.0>) initial_value(dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>)
  wsc.wafer.param @b : tensor<2xf32> optimizer(<sgd, lr = 0.0>) initial_value(dense_resource<blob> : tensor<2xf32>)
  wsc.memx.param @c : tensor<2x3xf32> optimizer(<sgd, lr = 0.0>) initial_value(dense<1.5> : tensor<2x3xf32>)
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F00000040"
    }
  }
#-}
