// torch-mlir's adaptive_avg_pool2d of 3x3 to 2x2 (windows of 2 that
// overlap), summing over the largest window and gathering from the batched
// input by the batch loop's linalg.index and computed rows.
module {
  func.func @forward(%arg0: tensor<4x2x3x3xf32>) -> tensor<4x2x2x2xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<2x2xf32>
    %1 = tensor.empty() : tensor<4x2x2x2xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<4x2x2x2xf32>) -> tensor<4x2x2x2xf32>
    %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%0 : tensor<2x2xf32>) outs(%2 : tensor<4x2x2x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %n = linalg.index 0 : index
      %c = linalg.index 1 : index
      %oh = linalg.index 2 : index
      %ow = linalg.index 3 : index
      %kh = linalg.index 4 : index
      %kw = linalg.index 5 : index
      %h = arith.addi %oh, %kh : index
      %w = arith.addi %ow, %kw : index
      %v = tensor.extract %arg0[%n, %c, %h, %w] : tensor<4x2x3x3xf32>
      %s = arith.addf %v, %out : f32
      linalg.yield %s : f32
    } -> tensor<4x2x2x2xf32>
    return %3 : tensor<4x2x2x2xf32>
  }
}
