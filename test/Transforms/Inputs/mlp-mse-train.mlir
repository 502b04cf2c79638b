#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
#map2 = affine_map<() -> ()>
module attributes {wsc.optimizer = {dampening = 0.000000e+00 : f64, lr = 5.000000e-01 : f64, momentum = 0.000000e+00 : f64, name = "sgd", nesterov = false, weight_decay = 0.000000e+00 : f64}} {
  func.func @train_step(%arg0: tensor<3x4xf32> {wsc.param = "0.weight"}, %arg1: tensor<2x3xf32> {wsc.param = "2.weight"}, %arg2: tensor<8x4xf32> {wsc.input = 0 : i64}, %arg3: tensor<8x2xf32> {wsc.label = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<3x4xf32> {wsc.grad = "0.weight"}, tensor<2x3xf32> {wsc.grad = "2.weight"}) {
    %cst = arith.constant 1.250000e-01 : f32
    %cst_0 = arith.constant 1.600000e+01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x3xf32>
    %transposed = linalg.transpose ins(%arg0 : tensor<3x4xf32>) outs(%0 : tensor<4x3xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<8x3xf32>
    %2 = linalg.fill ins(%cst_1 : f32) outs(%1 : tensor<8x3xf32>) -> tensor<8x3xf32>
    %3 = linalg.matmul ins(%arg2, %transposed : tensor<8x4xf32>, tensor<4x3xf32>) outs(%2 : tensor<8x3xf32>) -> tensor<8x3xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<8x3xf32>) outs(%1 : tensor<8x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.cmpf ugt, %in, %cst_1 : f32
      %29 = arith.select %28, %in, %cst_1 : f32
      linalg.yield %29 : f32
    } -> tensor<8x3xf32>
    %5 = tensor.empty() : tensor<3x2xf32>
    %transposed_2 = linalg.transpose ins(%arg1 : tensor<2x3xf32>) outs(%5 : tensor<3x2xf32>) permutation = [1, 0] 
    %6 = tensor.empty() : tensor<8x2xf32>
    %7 = linalg.fill ins(%cst_1 : f32) outs(%6 : tensor<8x2xf32>) -> tensor<8x2xf32>
    %8 = linalg.matmul ins(%4, %transposed_2 : tensor<8x3xf32>, tensor<3x2xf32>) outs(%7 : tensor<8x2xf32>) -> tensor<8x2xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%8, %arg3 : tensor<8x2xf32>, tensor<8x2xf32>) outs(%6 : tensor<8x2xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %28 = arith.subf %in, %in_5 : f32
      linalg.yield %28 : f32
    } -> tensor<8x2xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<8x2xf32>) outs(%6 : tensor<8x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.mulf %in, %in : f32
      linalg.yield %28 : f32
    } -> tensor<8x2xf32>
    %11 = tensor.empty() : tensor<f32>
    %12 = linalg.fill ins(%cst_1 : f32) outs(%11 : tensor<f32>) -> tensor<f32>
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%10 : tensor<8x2xf32>) outs(%12 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.addf %in, %out : f32
      linalg.yield %28 : f32
    } -> tensor<f32>
    %14 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%13 : tensor<f32>) outs(%11 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.divf %in, %cst_0 : f32
      linalg.yield %28 : f32
    } -> tensor<f32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<8x2xf32>) outs(%6 : tensor<8x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %28 = arith.mulf %in, %cst : f32
      linalg.yield %28 : f32
    } -> tensor<8x2xf32>
    %16 = tensor.empty() : tensor<2x8xf32>
    %transposed_3 = linalg.transpose ins(%15 : tensor<8x2xf32>) outs(%16 : tensor<2x8xf32>) permutation = [1, 0] 
    %17 = tensor.empty() : tensor<2x3xf32>
    %18 = linalg.fill ins(%cst_1 : f32) outs(%17 : tensor<2x3xf32>) -> tensor<2x3xf32>
    %19 = linalg.matmul ins(%transposed_3, %4 : tensor<2x8xf32>, tensor<8x3xf32>) outs(%18 : tensor<2x3xf32>) -> tensor<2x3xf32>
    %20 = linalg.matmul ins(%15, %arg1 : tensor<8x2xf32>, tensor<2x3xf32>) outs(%2 : tensor<8x3xf32>) -> tensor<8x3xf32>
    %21 = tensor.empty() : tensor<8x3xi1>
    %22 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<8x3xf32>) outs(%21 : tensor<8x3xi1>) {
    ^bb0(%in: f32, %out: i1):
      %28 = arith.cmpf ole, %in, %cst_1 : f32
      linalg.yield %28 : i1
    } -> tensor<8x3xi1>
    %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%22, %20 : tensor<8x3xi1>, tensor<8x3xf32>) outs(%1 : tensor<8x3xf32>) {
    ^bb0(%in: i1, %in_5: f32, %out: f32):
      %28 = arith.select %in, %cst_1, %in_5 : f32
      linalg.yield %28 : f32
    } -> tensor<8x3xf32>
    %24 = tensor.empty() : tensor<3x8xf32>
    %transposed_4 = linalg.transpose ins(%23 : tensor<8x3xf32>) outs(%24 : tensor<3x8xf32>) permutation = [1, 0] 
    %25 = tensor.empty() : tensor<3x4xf32>
    %26 = linalg.fill ins(%cst_1 : f32) outs(%25 : tensor<3x4xf32>) -> tensor<3x4xf32>
    %27 = linalg.matmul ins(%transposed_4, %arg2 : tensor<3x8xf32>, tensor<8x4xf32>) outs(%26 : tensor<3x4xf32>) -> tensor<3x4xf32>
    return %14, %27, %19 : tensor<f32>, tensor<3x4xf32>, tensor<2x3xf32>
  }
}

