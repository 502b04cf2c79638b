func.func @e(%a: tensor<16x6xf32>) -> tensor<2x8x6xf32> {
  %y = tensor.expand_shape %a [[0, 1], []] output_shape [2, 8, 6] : tensor<16x6xf32> into tensor<2x8x6xf32>
  return %y : tensor<2x8x6xf32>
}
