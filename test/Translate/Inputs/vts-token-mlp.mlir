// Inference: a token-wise layer between a strip at the entry and a restore
// at the exit (wsc-vts keeps both where they are).
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  func.func @infer(%w: tensor<6x4xf32> {wsc.param = "fc.weight"}, %x: tensor<2x8x4xf32> {wsc.input = 0 : i64},
                   %mask: tensor<2x8xi1> {wsc.input = 1 : i64}) -> (tensor<2x8x6xf32> {wsc.output = 0 : i64}) {
    %s = wsc.strip_padding %x, %mask : tensor<2x8x4xf32>, tensor<2x8xi1>
    %flat = tensor.collapse_shape %s [[0, 1], [2]] : tensor<2x8x4xf32> into tensor<16x4xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x6xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x6xf32>) -> tensor<16x6xf32>
    %mm = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%flat, %w : tensor<16x4xf32>, tensor<6x4xf32>) outs(%f : tensor<16x6xf32>) -> tensor<16x6xf32>
    %y = tensor.expand_shape %mm [[0, 1], [2]] output_shape [2, 8, 6] : tensor<16x6xf32> into tensor<2x8x6xf32>
    %r = wsc.restore_padding %y, %mask : tensor<2x8x6xf32>, tensor<2x8xi1>
    return %r : tensor<2x8x6xf32>
  }
}
