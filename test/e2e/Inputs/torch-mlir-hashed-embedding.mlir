// A hashed embedding as torch-mlir's LINALG_ON_TENSORS output prints it:
// ids in [-16, 16) pick a row of @hi by torch.div(ids, 4, rounding_mode=
// 'floor') + 4 (arith.floordivsi) and a row of @lo by torch.remainder(ids,
// 4) (arith.remsi, then the sign fix: cmpi, andi, select); each gather
// checks its index with cf.assert, as aten.embedding does; the sum goes
// through a linear layer. The tables are (k / 8) - 1 and (k / 4) - 2 in
// row-major order.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map3 = affine_map<(d0, d1) -> (d1)>
module attributes {torch.debug_module_name = "HashedEmbedding"} {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @forward(%arg0: tensor<4x3xi64>) -> tensor<4x3x2xf32> {
    %c4_i64 = arith.constant 4 : i64
    %c0_i64 = arith.constant 0 : i64
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %cst = arith.constant 0.000000e+00 : f32
    %hi = arith.constant dense<[[-1.0, -0.875, -0.75, -0.625], [-0.5, -0.375, -0.25, -0.125], [0.0, 0.125, 0.25, 0.375], [0.5, 0.625, 0.75, 0.875], [1.0, 1.125, 1.25, 1.375], [1.5, 1.625, 1.75, 1.875], [2.0, 2.125, 2.25, 2.375], [2.5, 2.625, 2.75, 2.875]]> : tensor<8x4xf32>
    %lo = arith.constant dense<[[-2.0, -1.75, -1.5, -1.25], [-1.0, -0.75, -0.5, -0.25], [0.0, 0.25, 0.5, 0.75], [1.0, 1.25, 1.5, 1.75]]> : tensor<4x4xf32>
    %w = arith.constant dense<[[1.0, -1.0, 0.5, 2.0], [0.0, 1.0, -2.0, 0.25]]> : tensor<2x4xf32>
    %b = arith.constant dense<[0.5, -0.25]> : tensor<2xf32>
    %0 = tensor.empty() : tensor<4x3xi64>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x3xi64>) outs(%0 : tensor<4x3xi64>) {
    ^bb0(%in: i64, %out: i64):
      %20 = arith.floordivsi %in, %c4_i64 : i64
      %21 = arith.addi %20, %c4_i64 : i64
      linalg.yield %21 : i64
    } -> tensor<4x3xi64>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x3xi64>) outs(%0 : tensor<4x3xi64>) {
    ^bb0(%in: i64, %out: i64):
      %20 = arith.remsi %in, %c4_i64 : i64
      %21 = arith.cmpi ne, %20, %c0_i64 : i64
      %22 = arith.cmpi slt, %20, %c0_i64 : i64
      %23 = arith.andi %21, %22 : i1
      %24 = arith.addi %20, %c4_i64 : i64
      %25 = arith.select %23, %24, %20 : i64
      linalg.yield %25 : i64
    } -> tensor<4x3xi64>
    %3 = tensor.empty() : tensor<4x3x4xf32>
    %4 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1 : tensor<4x3xi64>) outs(%3 : tensor<4x3x4xf32>) {
    ^bb0(%in: i64, %out: f32):
      %20 = arith.index_cast %in : i64 to index
      %21 = linalg.index 2 : index
      %22 = arith.cmpi slt, %20, %c8 : index
      cf.assert %22, "index must be smaller than dim size"
      %23 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %23, "index must be larger or equal to 0"
      %extracted = tensor.extract %hi[%20, %21] : tensor<8x4xf32>
      linalg.yield %extracted : f32
    } -> tensor<4x3x4xf32>
    %5 = linalg.generic {indexing_maps = [#map1, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2, %4 : tensor<4x3xi64>, tensor<4x3x4xf32>) outs(%3 : tensor<4x3x4xf32>) {
    ^bb0(%in: i64, %in_0: f32, %out: f32):
      %20 = arith.index_cast %in : i64 to index
      %21 = linalg.index 2 : index
      %22 = arith.cmpi slt, %20, %c4 : index
      cf.assert %22, "index must be smaller than dim size"
      %23 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %23, "index must be larger or equal to 0"
      %extracted = tensor.extract %lo[%20, %21] : tensor<4x4xf32>
      %24 = arith.addf %extracted, %in_0 : f32
      linalg.yield %24 : f32
    } -> tensor<4x3x4xf32>
    %collapsed = tensor.collapse_shape %5 [[0, 1], [2]] : tensor<4x3x4xf32> into tensor<12x4xf32>
    %6 = tensor.empty() : tensor<4x2xf32>
    %transposed = linalg.transpose ins(%w : tensor<2x4xf32>) outs(%6 : tensor<4x2xf32>) permutation = [1, 0]
    %7 = tensor.empty() : tensor<12x2xf32>
    %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<12x2xf32>) -> tensor<12x2xf32>
    %9 = linalg.matmul ins(%collapsed, %transposed : tensor<12x4xf32>, tensor<4x2xf32>) outs(%8 : tensor<12x2xf32>) -> tensor<12x2xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel"]} ins(%9, %b : tensor<12x2xf32>, tensor<2xf32>) outs(%7 : tensor<12x2xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %20 = arith.addf %in, %in_0 : f32
      linalg.yield %20 : f32
    } -> tensor<12x2xf32>
    %expanded = tensor.expand_shape %10 [[0, 1], [2]] output_shape [4, 3, 2] : tensor<12x2xf32> into tensor<4x3x2xf32>
    return %expanded : tensor<4x3x2xf32>
  }
}
