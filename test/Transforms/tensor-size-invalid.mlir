// RUN: wsc-opt %s --wsc-legalize -split-input-file -verify-diagnostics

// A tensor over 2^40 elements is refused at the start of the pipeline, at the
// value, before any pass multiplies its size (issue 21: dims of 2^62 wrapped
// to stream bytes of 0 and -9.22e18).

// expected-error @+1 {{argument #0 of type 'tensor<4611686018427387904x4xf32>' has more than 2^63 elements, over wsc's bound of 2^40 (1099511627776) per tensor: its byte and SRAM sizes would overflow}}
func.func @param(%w: tensor<4611686018427387904x4xf32> {wsc.param = "w"}) -> tensor<4611686018427387904x4xf32> {
  return %w : tensor<4611686018427387904x4xf32>
}

// -----

// Within int64 but over the bound: the count is named.
func.func @result(%x: tensor<2xf32>) -> tensor<1099511627777xf32> {
  // expected-error @+1 {{result #0 of 'tensor.empty' of type 'tensor<1099511627777xf32>' has 1099511627777 elements, over wsc's bound of 2^40}}
  %0 = tensor.empty() : tensor<1099511627777xf32>
  return %0 : tensor<1099511627777xf32>
}

// -----

// At the bound: accepted.
func.func @at_bound(%x: tensor<1048576x1048576xf32>) -> tensor<1048576x1048576xf32> {
  return %x : tensor<1048576x1048576xf32>
}

// -----

// An empty tensor: the emulator would refuse the loops that index it.
func.func @empty(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{result #0 of 'tensor.empty' of type 'tensor<2x0xf32>' has no elements (dim 1 is 0): wsc needs every dim at least 1}}
  %0 = tensor.empty() : tensor<2x0xf32>
  return %x : tensor<2x8xf32>
}
