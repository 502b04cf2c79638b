// A 5-layer, 1024-wide MLP training step (batch 2, MSE, SGD), exported by wsc.export:
// on a 1x1-PE grid its activations kept for the backward pass overflow PE SRAM.
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  func.func @train_step(%arg0: tensor<1024x1024xf32> {wsc.param = "0.weight"}, %arg1: tensor<1024xf32> {wsc.param = "0.bias"}, %arg2: tensor<1024x1024xf32> {wsc.param = "2.weight"}, %arg3: tensor<1024xf32> {wsc.param = "2.bias"}, %arg4: tensor<1024x1024xf32> {wsc.param = "4.weight"}, %arg5: tensor<1024xf32> {wsc.param = "4.bias"}, %arg6: tensor<1024x1024xf32> {wsc.param = "6.weight"}, %arg7: tensor<1024xf32> {wsc.param = "6.bias"}, %arg8: tensor<1024x1024xf32> {wsc.param = "8.weight"}, %arg9: tensor<1024xf32> {wsc.param = "8.bias"}, %arg10: tensor<4x1024xf32> {wsc.param = "10.weight"}, %arg11: tensor<4xf32> {wsc.param = "10.bias"}, %arg12: tensor<2x1024xf32> {wsc.input = 0 : i64}, %arg13: tensor<2x4xf32> {wsc.label = 0 : i64}) -> (tensor<f32> {wsc.loss}, tensor<1024x1024xf32> {wsc.grad = "0.weight"}, tensor<1024xf32> {wsc.grad = "0.bias"}, tensor<1024x1024xf32> {wsc.grad = "2.weight"}, tensor<1024xf32> {wsc.grad = "2.bias"}, tensor<1024x1024xf32> {wsc.grad = "4.weight"}, tensor<1024xf32> {wsc.grad = "4.bias"}, tensor<1024x1024xf32> {wsc.grad = "6.weight"}, tensor<1024xf32> {wsc.grad = "6.bias"}, tensor<1024x1024xf32> {wsc.grad = "8.weight"}, tensor<1024xf32> {wsc.grad = "8.bias"}, tensor<4x1024xf32> {wsc.grad = "10.weight"}, tensor<4xf32> {wsc.grad = "10.bias"}) {
    %t.0 = tensor.empty() : tensor<1024x1024xf32>
    %t = linalg.transpose ins(%arg0 : tensor<1024x1024xf32>) outs(%t.0 : tensor<1024x1024xf32>) permutation = [1, 0]
    %mm.0 = tensor.empty() : tensor<2x1024xf32>
    %cst.0 = arith.constant 0.0 : f32
    %mm.1 = linalg.fill ins(%cst.0 : f32) outs(%mm.0 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %mm = linalg.matmul ins(%arg12, %t : tensor<2x1024xf32>, tensor<1024x1024xf32>) outs(%mm.1 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %add.0 = tensor.empty() : tensor<2x1024xf32>
    %add = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg1, %mm : tensor<1024xf32>, tensor<2x1024xf32>) outs(%add.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<2x1024xf32>
    %relu.0 = tensor.empty() : tensor<2x1024xf32>
    %relu = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add : tensor<2x1024xf32>) outs(%relu.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ugt, %b.in0, %b.0 : f32
      %b.2 = arith.select %b.1, %b.in0, %b.0 : f32
      linalg.yield %b.2 : f32
    } -> tensor<2x1024xf32>
    %t_1.0 = tensor.empty() : tensor<1024x1024xf32>
    %t_1 = linalg.transpose ins(%arg2 : tensor<1024x1024xf32>) outs(%t_1.0 : tensor<1024x1024xf32>) permutation = [1, 0]
    %mm_1.0 = tensor.empty() : tensor<2x1024xf32>
    %mm_1.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_1.0 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %mm_1 = linalg.matmul ins(%relu, %t_1 : tensor<2x1024xf32>, tensor<1024x1024xf32>) outs(%mm_1.1 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %add_1.0 = tensor.empty() : tensor<2x1024xf32>
    %add_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg3, %mm_1 : tensor<1024xf32>, tensor<2x1024xf32>) outs(%add_1.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<2x1024xf32>
    %relu_1.0 = tensor.empty() : tensor<2x1024xf32>
    %relu_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add_1 : tensor<2x1024xf32>) outs(%relu_1.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ugt, %b.in0, %b.0 : f32
      %b.2 = arith.select %b.1, %b.in0, %b.0 : f32
      linalg.yield %b.2 : f32
    } -> tensor<2x1024xf32>
    %t_2.0 = tensor.empty() : tensor<1024x1024xf32>
    %t_2 = linalg.transpose ins(%arg4 : tensor<1024x1024xf32>) outs(%t_2.0 : tensor<1024x1024xf32>) permutation = [1, 0]
    %mm_2.0 = tensor.empty() : tensor<2x1024xf32>
    %mm_2.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_2.0 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %mm_2 = linalg.matmul ins(%relu_1, %t_2 : tensor<2x1024xf32>, tensor<1024x1024xf32>) outs(%mm_2.1 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %add_2.0 = tensor.empty() : tensor<2x1024xf32>
    %add_2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg5, %mm_2 : tensor<1024xf32>, tensor<2x1024xf32>) outs(%add_2.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<2x1024xf32>
    %relu_2.0 = tensor.empty() : tensor<2x1024xf32>
    %relu_2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add_2 : tensor<2x1024xf32>) outs(%relu_2.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ugt, %b.in0, %b.0 : f32
      %b.2 = arith.select %b.1, %b.in0, %b.0 : f32
      linalg.yield %b.2 : f32
    } -> tensor<2x1024xf32>
    %t_3.0 = tensor.empty() : tensor<1024x1024xf32>
    %t_3 = linalg.transpose ins(%arg6 : tensor<1024x1024xf32>) outs(%t_3.0 : tensor<1024x1024xf32>) permutation = [1, 0]
    %mm_3.0 = tensor.empty() : tensor<2x1024xf32>
    %mm_3.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_3.0 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %mm_3 = linalg.matmul ins(%relu_2, %t_3 : tensor<2x1024xf32>, tensor<1024x1024xf32>) outs(%mm_3.1 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %add_3.0 = tensor.empty() : tensor<2x1024xf32>
    %add_3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg7, %mm_3 : tensor<1024xf32>, tensor<2x1024xf32>) outs(%add_3.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<2x1024xf32>
    %relu_3.0 = tensor.empty() : tensor<2x1024xf32>
    %relu_3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add_3 : tensor<2x1024xf32>) outs(%relu_3.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ugt, %b.in0, %b.0 : f32
      %b.2 = arith.select %b.1, %b.in0, %b.0 : f32
      linalg.yield %b.2 : f32
    } -> tensor<2x1024xf32>
    %t_4.0 = tensor.empty() : tensor<1024x1024xf32>
    %t_4 = linalg.transpose ins(%arg8 : tensor<1024x1024xf32>) outs(%t_4.0 : tensor<1024x1024xf32>) permutation = [1, 0]
    %mm_4.0 = tensor.empty() : tensor<2x1024xf32>
    %mm_4.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_4.0 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %mm_4 = linalg.matmul ins(%relu_3, %t_4 : tensor<2x1024xf32>, tensor<1024x1024xf32>) outs(%mm_4.1 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %add_4.0 = tensor.empty() : tensor<2x1024xf32>
    %add_4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg9, %mm_4 : tensor<1024xf32>, tensor<2x1024xf32>) outs(%add_4.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<2x1024xf32>
    %relu_4.0 = tensor.empty() : tensor<2x1024xf32>
    %relu_4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add_4 : tensor<2x1024xf32>) outs(%relu_4.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ugt, %b.in0, %b.0 : f32
      %b.2 = arith.select %b.1, %b.in0, %b.0 : f32
      linalg.yield %b.2 : f32
    } -> tensor<2x1024xf32>
    %t_5.0 = tensor.empty() : tensor<1024x4xf32>
    %t_5 = linalg.transpose ins(%arg10 : tensor<4x1024xf32>) outs(%t_5.0 : tensor<1024x4xf32>) permutation = [1, 0]
    %mm_5.0 = tensor.empty() : tensor<2x4xf32>
    %mm_5.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_5.0 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %mm_5 = linalg.matmul ins(%relu_4, %t_5 : tensor<2x1024xf32>, tensor<1024x4xf32>) outs(%mm_5.1 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %add_5.0 = tensor.empty() : tensor<2x4xf32>
    %add_5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg11, %mm_5 : tensor<4xf32>, tensor<2x4xf32>) outs(%add_5.0 : tensor<2x4xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<2x4xf32>
    %sub.0 = tensor.empty() : tensor<2x4xf32>
    %sub = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add_5, %arg13 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%sub.0 : tensor<2x4xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.subf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<2x4xf32>
    %pow_1.0 = tensor.empty() : tensor<2x4xf32>
    %pow_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sub : tensor<2x4xf32>) outs(%pow_1.0 : tensor<2x4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.mulf %b.in0, %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<2x4xf32>
    %mean.1 = tensor.empty() : tensor<f32>
    %mean.2 = linalg.fill ins(%cst.0 : f32) outs(%mean.1 : tensor<f32>) -> tensor<f32>
    %mean.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%pow_1 : tensor<2x4xf32>) outs(%mean.2 : tensor<f32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<f32>
    %mean.3 = tensor.empty() : tensor<f32>
    %mean = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%mean.0 : tensor<f32>) outs(%mean.3 : tensor<f32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 8.0 : f32
      %b.1 = arith.divf %b.in0, %b.0 : f32
      linalg.yield %b.1 : f32
    } -> tensor<f32>
    %sub_1.0 = tensor.empty() : tensor<2x4xf32>
    %sub_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add_5, %arg13 : tensor<2x4xf32>, tensor<2x4xf32>) outs(%sub_1.0 : tensor<2x4xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.subf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<2x4xf32>
    %mul_12.0 = tensor.empty() : tensor<2x4xf32>
    %mul_12 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sub_1 : tensor<2x4xf32>) outs(%mul_12.0 : tensor<2x4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 0.25 : f32
      %b.1 = arith.mulf %b.in0, %b.0 : f32
      linalg.yield %b.1 : f32
    } -> tensor<2x4xf32>
    %mm_6.0 = tensor.empty() : tensor<2x1024xf32>
    %mm_6.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_6.0 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %mm_6 = linalg.matmul ins(%mul_12, %arg10 : tensor<2x4xf32>, tensor<4x1024xf32>) outs(%mm_6.1 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %t_7.0 = tensor.empty() : tensor<4x2xf32>
    %t_7 = linalg.transpose ins(%mul_12 : tensor<2x4xf32>) outs(%t_7.0 : tensor<4x2xf32>) permutation = [1, 0]
    %mm_7.0 = tensor.empty() : tensor<4x1024xf32>
    %mm_7.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_7.0 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
    %mm_7 = linalg.matmul ins(%t_7, %relu_4 : tensor<4x2xf32>, tensor<2x1024xf32>) outs(%mm_7.1 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
    %sum_1.1 = tensor.empty() : tensor<4xf32>
    %sum_1.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_1.1 : tensor<4xf32>) -> tensor<4xf32>
    %sum_1.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%mul_12 : tensor<2x4xf32>) outs(%sum_1.2 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<4xf32>
    %le.0 = tensor.empty() : tensor<2x1024xi1>
    %le = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%relu_4 : tensor<2x1024xf32>) outs(%le.0 : tensor<2x1024xi1>) {
    ^bb0(%b.in0: f32, %b.out: i1):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ole, %b.in0, %b.0 : f32
      linalg.yield %b.1 : i1
    } -> tensor<2x1024xi1>
    %where.0 = tensor.empty() : tensor<2x1024xf32>
    %where = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%le, %mm_6 : tensor<2x1024xi1>, tensor<2x1024xf32>) outs(%where.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: i1, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.select %b.in0, %b.0, %b.in1 : f32
      linalg.yield %b.1 : f32
    } -> tensor<2x1024xf32>
    %mm_8.0 = tensor.empty() : tensor<2x1024xf32>
    %mm_8.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_8.0 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %mm_8 = linalg.matmul ins(%where, %arg8 : tensor<2x1024xf32>, tensor<1024x1024xf32>) outs(%mm_8.1 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %t_11.0 = tensor.empty() : tensor<1024x2xf32>
    %t_11 = linalg.transpose ins(%where : tensor<2x1024xf32>) outs(%t_11.0 : tensor<1024x2xf32>) permutation = [1, 0]
    %mm_9.0 = tensor.empty() : tensor<1024x1024xf32>
    %mm_9.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_9.0 : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %mm_9 = linalg.matmul ins(%t_11, %relu_3 : tensor<1024x2xf32>, tensor<2x1024xf32>) outs(%mm_9.1 : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %sum_2.1 = tensor.empty() : tensor<1024xf32>
    %sum_2.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_2.1 : tensor<1024xf32>) -> tensor<1024xf32>
    %sum_2.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%where : tensor<2x1024xf32>) outs(%sum_2.2 : tensor<1024xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<1024xf32>
    %le_1.0 = tensor.empty() : tensor<2x1024xi1>
    %le_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%relu_3 : tensor<2x1024xf32>) outs(%le_1.0 : tensor<2x1024xi1>) {
    ^bb0(%b.in0: f32, %b.out: i1):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ole, %b.in0, %b.0 : f32
      linalg.yield %b.1 : i1
    } -> tensor<2x1024xi1>
    %where_1.0 = tensor.empty() : tensor<2x1024xf32>
    %where_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%le_1, %mm_8 : tensor<2x1024xi1>, tensor<2x1024xf32>) outs(%where_1.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: i1, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.select %b.in0, %b.0, %b.in1 : f32
      linalg.yield %b.1 : f32
    } -> tensor<2x1024xf32>
    %mm_10.0 = tensor.empty() : tensor<2x1024xf32>
    %mm_10.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_10.0 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %mm_10 = linalg.matmul ins(%where_1, %arg6 : tensor<2x1024xf32>, tensor<1024x1024xf32>) outs(%mm_10.1 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %t_15.0 = tensor.empty() : tensor<1024x2xf32>
    %t_15 = linalg.transpose ins(%where_1 : tensor<2x1024xf32>) outs(%t_15.0 : tensor<1024x2xf32>) permutation = [1, 0]
    %mm_11.0 = tensor.empty() : tensor<1024x1024xf32>
    %mm_11.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_11.0 : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %mm_11 = linalg.matmul ins(%t_15, %relu_2 : tensor<1024x2xf32>, tensor<2x1024xf32>) outs(%mm_11.1 : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %sum_3.1 = tensor.empty() : tensor<1024xf32>
    %sum_3.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_3.1 : tensor<1024xf32>) -> tensor<1024xf32>
    %sum_3.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%where_1 : tensor<2x1024xf32>) outs(%sum_3.2 : tensor<1024xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<1024xf32>
    %le_2.0 = tensor.empty() : tensor<2x1024xi1>
    %le_2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%relu_2 : tensor<2x1024xf32>) outs(%le_2.0 : tensor<2x1024xi1>) {
    ^bb0(%b.in0: f32, %b.out: i1):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ole, %b.in0, %b.0 : f32
      linalg.yield %b.1 : i1
    } -> tensor<2x1024xi1>
    %where_2.0 = tensor.empty() : tensor<2x1024xf32>
    %where_2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%le_2, %mm_10 : tensor<2x1024xi1>, tensor<2x1024xf32>) outs(%where_2.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: i1, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.select %b.in0, %b.0, %b.in1 : f32
      linalg.yield %b.1 : f32
    } -> tensor<2x1024xf32>
    %mm_12.0 = tensor.empty() : tensor<2x1024xf32>
    %mm_12.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_12.0 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %mm_12 = linalg.matmul ins(%where_2, %arg4 : tensor<2x1024xf32>, tensor<1024x1024xf32>) outs(%mm_12.1 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %t_19.0 = tensor.empty() : tensor<1024x2xf32>
    %t_19 = linalg.transpose ins(%where_2 : tensor<2x1024xf32>) outs(%t_19.0 : tensor<1024x2xf32>) permutation = [1, 0]
    %mm_13.0 = tensor.empty() : tensor<1024x1024xf32>
    %mm_13.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_13.0 : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %mm_13 = linalg.matmul ins(%t_19, %relu_1 : tensor<1024x2xf32>, tensor<2x1024xf32>) outs(%mm_13.1 : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %sum_4.1 = tensor.empty() : tensor<1024xf32>
    %sum_4.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_4.1 : tensor<1024xf32>) -> tensor<1024xf32>
    %sum_4.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%where_2 : tensor<2x1024xf32>) outs(%sum_4.2 : tensor<1024xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<1024xf32>
    %le_3.0 = tensor.empty() : tensor<2x1024xi1>
    %le_3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%relu_1 : tensor<2x1024xf32>) outs(%le_3.0 : tensor<2x1024xi1>) {
    ^bb0(%b.in0: f32, %b.out: i1):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ole, %b.in0, %b.0 : f32
      linalg.yield %b.1 : i1
    } -> tensor<2x1024xi1>
    %where_3.0 = tensor.empty() : tensor<2x1024xf32>
    %where_3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%le_3, %mm_12 : tensor<2x1024xi1>, tensor<2x1024xf32>) outs(%where_3.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: i1, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.select %b.in0, %b.0, %b.in1 : f32
      linalg.yield %b.1 : f32
    } -> tensor<2x1024xf32>
    %mm_14.0 = tensor.empty() : tensor<2x1024xf32>
    %mm_14.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_14.0 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %mm_14 = linalg.matmul ins(%where_3, %arg2 : tensor<2x1024xf32>, tensor<1024x1024xf32>) outs(%mm_14.1 : tensor<2x1024xf32>) -> tensor<2x1024xf32>
    %t_23.0 = tensor.empty() : tensor<1024x2xf32>
    %t_23 = linalg.transpose ins(%where_3 : tensor<2x1024xf32>) outs(%t_23.0 : tensor<1024x2xf32>) permutation = [1, 0]
    %mm_15.0 = tensor.empty() : tensor<1024x1024xf32>
    %mm_15.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_15.0 : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %mm_15 = linalg.matmul ins(%t_23, %relu : tensor<1024x2xf32>, tensor<2x1024xf32>) outs(%mm_15.1 : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %sum_5.1 = tensor.empty() : tensor<1024xf32>
    %sum_5.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_5.1 : tensor<1024xf32>) -> tensor<1024xf32>
    %sum_5.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%where_3 : tensor<2x1024xf32>) outs(%sum_5.2 : tensor<1024xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<1024xf32>
    %le_4.0 = tensor.empty() : tensor<2x1024xi1>
    %le_4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%relu : tensor<2x1024xf32>) outs(%le_4.0 : tensor<2x1024xi1>) {
    ^bb0(%b.in0: f32, %b.out: i1):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ole, %b.in0, %b.0 : f32
      linalg.yield %b.1 : i1
    } -> tensor<2x1024xi1>
    %where_4.0 = tensor.empty() : tensor<2x1024xf32>
    %where_4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%le_4, %mm_14 : tensor<2x1024xi1>, tensor<2x1024xf32>) outs(%where_4.0 : tensor<2x1024xf32>) {
    ^bb0(%b.in0: i1, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.select %b.in0, %b.0, %b.in1 : f32
      linalg.yield %b.1 : f32
    } -> tensor<2x1024xf32>
    %t_26.0 = tensor.empty() : tensor<1024x2xf32>
    %t_26 = linalg.transpose ins(%where_4 : tensor<2x1024xf32>) outs(%t_26.0 : tensor<1024x2xf32>) permutation = [1, 0]
    %mm_16.0 = tensor.empty() : tensor<1024x1024xf32>
    %mm_16.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_16.0 : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %mm_16 = linalg.matmul ins(%t_26, %arg12 : tensor<1024x2xf32>, tensor<2x1024xf32>) outs(%mm_16.1 : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %sum_6.1 = tensor.empty() : tensor<1024xf32>
    %sum_6.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_6.1 : tensor<1024xf32>) -> tensor<1024xf32>
    %sum_6.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%where_4 : tensor<2x1024xf32>) outs(%sum_6.2 : tensor<1024xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<1024xf32>
    return %mean, %mm_16, %sum_6.0, %mm_15, %sum_5.0, %mm_13, %sum_4.0, %mm_11, %sum_3.0, %mm_9, %sum_2.0, %mm_7, %sum_1.0 : tensor<f32>, tensor<1024x1024xf32>, tensor<1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>, tensor<4x1024xf32>, tensor<4xf32>
  }
}

