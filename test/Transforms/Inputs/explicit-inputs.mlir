// Two float arguments combined elementwise: nothing tells which is the
// input, so the user says so with inputs=.
func.func @forward(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %1 = arith.mulf %x, %y : f32
    linalg.yield %1 : f32
  } -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
