func.func @b(%a: tensor<f32>, %i: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = linalg.broadcast ins(%a : tensor<f32>) outs(%i : tensor<2x3xf32>) dimensions = [0, 0]
  return %r : tensor<2x3xf32>
}
