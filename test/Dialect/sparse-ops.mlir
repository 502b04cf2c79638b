// RUN: wsc-opt %s | wsc-opt | FileCheck %s

// A sparse parameter: CSR weight streams in both orders, a mask-format
// gradient stream; a dense stream of a sparse parameter stays legal (the
// compiler picks it where CSR would not be smaller).
// CHECK: wsc.memx.param @fc.weight : tensor<4x3xf32> optimizer(<sgd, lr = 1.000000e-01>) sparsity(<density = 2.500000e-01, source = "magnitude">)
wsc.memx.param @fc.weight : tensor<4x3xf32> optimizer(<sgd, lr = 0.1>)
    sparsity(#wsc.sparsity<density = 0.25, source = "magnitude">)
// CHECK: wsc.memx.param @fc.bias : tensor<4xf32> optimizer(<sgd, lr = 1.000000e-01>){{$}}
wsc.memx.param @fc.bias : tensor<4xf32> optimizer(<sgd, lr = 0.1>)

// CHECK-LABEL: func.func @step
func.func @step(%g: tensor<4x3xf32>) {
  // CHECK: wsc.memx.stream @fc.weight order(<row_major>) format(<csr>) : <tensor<4x3xf16>>
  %w = wsc.memx.stream @fc.weight order(<row_major>) format(<csr>) : !wsc.stream<tensor<4x3xf16>>
  // CHECK: wsc.memx.stream @fc.weight order(<transposed>) format(<csr>) : <tensor<3x4xf16>>
  %t = wsc.memx.stream @fc.weight order(<transposed>) format(<csr>) : !wsc.stream<tensor<3x4xf16>>
  // CHECK: wsc.memx.stream @fc.weight order(<row_major>) format(<dense>) : <tensor<4x3xf16>>
  %d = wsc.memx.stream @fc.weight order(<row_major>) format(<dense>) : !wsc.stream<tensor<4x3xf16>>
  %r = wsc.swarmx.reduce %g order(<row_major>) : tensor<4x3xf32> -> !wsc.stream<tensor<4x3xf32>>
  // CHECK: wsc.memx.update @fc.weight(%{{.*}}) format(<mask>) : <tensor<4x3xf32>>
  wsc.memx.update @fc.weight(%r) format(<mask>) : !wsc.stream<tensor<4x3xf32>>
  return
}
