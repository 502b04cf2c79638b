// A torch-mlir forward pass printed with its weights elided
// (--mlir-elide-resource-strings-if-larger), as published files are.
module {
  func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
    %w = arith.constant dense_resource<__elided__> : tensor<8x4xf32>
    %b = arith.constant dense_resource<__elided__> : tensor<4xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %0 = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0, %b : tensor<4x4xf32>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%in: f32, %bias: f32, %o: f32):
      %2 = arith.addf %in, %bias : f32
      linalg.yield %2 : f32
    } -> tensor<4x4xf32>
    return %1 : tensor<4x4xf32>
  }
}
