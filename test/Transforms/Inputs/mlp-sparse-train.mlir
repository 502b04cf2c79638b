// A 64-64-10 MLP whose weights keep 10.4% (0.weight) and 92.2% (2.weight) of
// their entries, exported by wsc.export with wsc.sparsity arguments.
module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  func.func @train_step(%arg0: tensor<64x64xf32> {wsc.param = "0.weight", wsc.sparsity = {density = 0.104 : f64, source = "explicit"}}, %arg1: tensor<64xf32> {wsc.param = "0.bias"}, %arg2: tensor<10x64xf32> {wsc.param = "2.weight", wsc.sparsity = {density = 0.922 : f64, source = "explicit"}}, %arg3: tensor<10xf32> {wsc.param = "2.bias"}, %arg4: tensor<8x64xf32> {wsc.input = 0 : i64}, %arg5: tensor<8xi64> {wsc.label = 0 : i64, wsc.num_classes = 10 : i64}) -> (tensor<f32> {wsc.loss}, tensor<64x64xf32> {wsc.grad = "0.weight"}, tensor<64xf32> {wsc.grad = "0.bias"}, tensor<10x64xf32> {wsc.grad = "2.weight"}, tensor<10xf32> {wsc.grad = "2.bias"}) {
    %t.0 = tensor.empty() : tensor<64x64xf32>
    %t = linalg.transpose ins(%arg0 : tensor<64x64xf32>) outs(%t.0 : tensor<64x64xf32>) permutation = [1, 0]
    %mm.0 = tensor.empty() : tensor<8x64xf32>
    %cst.0 = arith.constant 0.0 : f32
    %mm.1 = linalg.fill ins(%cst.0 : f32) outs(%mm.0 : tensor<8x64xf32>) -> tensor<8x64xf32>
    %mm = linalg.matmul ins(%arg4, %t : tensor<8x64xf32>, tensor<64x64xf32>) outs(%mm.1 : tensor<8x64xf32>) -> tensor<8x64xf32>
    %add.0 = tensor.empty() : tensor<8x64xf32>
    %add = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg1, %mm : tensor<64xf32>, tensor<8x64xf32>) outs(%add.0 : tensor<8x64xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<8x64xf32>
    %relu.0 = tensor.empty() : tensor<8x64xf32>
    %relu = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add : tensor<8x64xf32>) outs(%relu.0 : tensor<8x64xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ugt, %b.in0, %b.0 : f32
      %b.2 = arith.select %b.1, %b.in0, %b.0 : f32
      linalg.yield %b.2 : f32
    } -> tensor<8x64xf32>
    %t_1.0 = tensor.empty() : tensor<64x10xf32>
    %t_1 = linalg.transpose ins(%arg2 : tensor<10x64xf32>) outs(%t_1.0 : tensor<64x10xf32>) permutation = [1, 0]
    %mm_1.0 = tensor.empty() : tensor<8x10xf32>
    %mm_1.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_1.0 : tensor<8x10xf32>) -> tensor<8x10xf32>
    %mm_1 = linalg.matmul ins(%relu, %t_1 : tensor<8x64xf32>, tensor<64x10xf32>) outs(%mm_1.1 : tensor<8x10xf32>) -> tensor<8x10xf32>
    %add_1.0 = tensor.empty() : tensor<8x10xf32>
    %add_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg3, %mm_1 : tensor<10xf32>, tensor<8x10xf32>) outs(%add_1.0 : tensor<8x10xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<8x10xf32>
    %amax.1 = tensor.empty() : tensor<8xf32>
    %cst.1 = arith.constant 0xFF800000 : f32
    %amax.2 = linalg.fill ins(%cst.1 : f32) outs(%amax.1 : tensor<8xf32>) -> tensor<8xf32>
    %amax.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%add_1 : tensor<8x10xf32>) outs(%amax.2 : tensor<8xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.maximumf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<8xf32>
    %amax = tensor.expand_shape %amax.0 [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
    %sub.0 = tensor.empty() : tensor<8x10xf32>
    %sub = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add_1, %amax : tensor<8x10xf32>, tensor<8x1xf32>) outs(%sub.0 : tensor<8x10xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.subf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<8x10xf32>
    %exp.0 = tensor.empty() : tensor<8x10xf32>
    %exp = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sub : tensor<8x10xf32>) outs(%exp.0 : tensor<8x10xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = math.exp %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<8x10xf32>
    %sum_1.1 = tensor.empty() : tensor<8xf32>
    %sum_1.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_1.1 : tensor<8xf32>) -> tensor<8xf32>
    %sum_1.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<8x10xf32>) outs(%sum_1.2 : tensor<8xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<8xf32>
    %sum_1 = tensor.expand_shape %sum_1.0 [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
    %log.0 = tensor.empty() : tensor<8x1xf32>
    %log = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sum_1 : tensor<8x1xf32>) outs(%log.0 : tensor<8x1xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = math.log %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<8x1xf32>
    %sub_1.0 = tensor.empty() : tensor<8x10xf32>
    %sub_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sub, %log : tensor<8x10xf32>, tensor<8x1xf32>) outs(%sub_1.0 : tensor<8x10xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.subf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<8x10xf32>
    %nll_loss_forward.1 = tensor.empty() : tensor<f32>
    %nll_loss_forward.2 = linalg.fill ins(%cst.0 : f32) outs(%nll_loss_forward.1 : tensor<f32>) -> tensor<f32>
    %nll_loss_forward.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%sub_1, %arg5 : tensor<8x10xf32>, tensor<8xi64>) outs(%nll_loss_forward.2 : tensor<f32>) {
    ^bb0(%b.in0: f32, %b.in1: i64, %b.out: f32):
      %b.0 = linalg.index 1 : index
      %b.1 = arith.index_cast %b.0 : index to i64
      %b.2 = arith.cmpi eq, %b.1, %b.in1 : i64
      %b.3 = arith.constant 0.0 : f32
      %b.4 = arith.select %b.2, %b.in0, %b.3 : f32
      %b.5 = arith.subf %b.out, %b.4 : f32
      linalg.yield %b.5 : f32
    } -> tensor<f32>
    %nll_loss_forward.3 = tensor.empty() : tensor<f32>
    %nll_loss_forward = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%nll_loss_forward.0 : tensor<f32>) outs(%nll_loss_forward.3 : tensor<f32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 8.0 : f32
      %b.1 = arith.divf %b.in0, %b.0 : f32
      linalg.yield %b.1 : f32
    } -> tensor<f32>
    %nll_loss_backward.0 = tensor.empty() : tensor<8x10xf32>
    %nll_loss_backward = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg5 : tensor<8xi64>) outs(%nll_loss_backward.0 : tensor<8x10xf32>) {
    ^bb0(%b.in0: i64, %b.out: f32):
      %b.0 = arith.constant 1.0 : f32
      %b.1 = arith.constant 8.0 : f32
      %b.2 = arith.divf %b.0, %b.1 : f32
      %b.3 = arith.negf %b.2 : f32
      %b.4 = linalg.index 1 : index
      %b.5 = arith.index_cast %b.4 : index to i64
      %b.6 = arith.cmpi eq, %b.5, %b.in0 : i64
      %b.7 = arith.constant 0.0 : f32
      %b.8 = arith.select %b.6, %b.3, %b.7 : f32
      linalg.yield %b.8 : f32
    } -> tensor<8x10xf32>
    %exp_1.0 = tensor.empty() : tensor<8x10xf32>
    %exp_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sub_1 : tensor<8x10xf32>) outs(%exp_1.0 : tensor<8x10xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = math.exp %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<8x10xf32>
    %sum_2.1 = tensor.empty() : tensor<8xf32>
    %sum_2.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_2.1 : tensor<8xf32>) -> tensor<8xf32>
    %sum_2.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%nll_loss_backward : tensor<8x10xf32>) outs(%sum_2.2 : tensor<8xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<8xf32>
    %sum_2 = tensor.expand_shape %sum_2.0 [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
    %mul_4.0 = tensor.empty() : tensor<8x10xf32>
    %mul_4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%exp_1, %sum_2 : tensor<8x10xf32>, tensor<8x1xf32>) outs(%mul_4.0 : tensor<8x10xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.mulf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<8x10xf32>
    %sub_2.0 = tensor.empty() : tensor<8x10xf32>
    %sub_2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%nll_loss_backward, %mul_4 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%sub_2.0 : tensor<8x10xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.subf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<8x10xf32>
    %mm_2.0 = tensor.empty() : tensor<8x64xf32>
    %mm_2.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_2.0 : tensor<8x64xf32>) -> tensor<8x64xf32>
    %mm_2 = linalg.matmul ins(%sub_2, %arg2 : tensor<8x10xf32>, tensor<10x64xf32>) outs(%mm_2.1 : tensor<8x64xf32>) -> tensor<8x64xf32>
    %t_3.0 = tensor.empty() : tensor<10x8xf32>
    %t_3 = linalg.transpose ins(%sub_2 : tensor<8x10xf32>) outs(%t_3.0 : tensor<10x8xf32>) permutation = [1, 0]
    %mm_3.0 = tensor.empty() : tensor<10x64xf32>
    %mm_3.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_3.0 : tensor<10x64xf32>) -> tensor<10x64xf32>
    %mm_3 = linalg.matmul ins(%t_3, %relu : tensor<10x8xf32>, tensor<8x64xf32>) outs(%mm_3.1 : tensor<10x64xf32>) -> tensor<10x64xf32>
    %sum_3.1 = tensor.empty() : tensor<10xf32>
    %sum_3.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_3.1 : tensor<10xf32>) -> tensor<10xf32>
    %sum_3.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%sub_2 : tensor<8x10xf32>) outs(%sum_3.2 : tensor<10xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<10xf32>
    %le.0 = tensor.empty() : tensor<8x64xi1>
    %le = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%relu : tensor<8x64xf32>) outs(%le.0 : tensor<8x64xi1>) {
    ^bb0(%b.in0: f32, %b.out: i1):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ole, %b.in0, %b.0 : f32
      linalg.yield %b.1 : i1
    } -> tensor<8x64xi1>
    %where.0 = tensor.empty() : tensor<8x64xf32>
    %where = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%le, %mm_2 : tensor<8x64xi1>, tensor<8x64xf32>) outs(%where.0 : tensor<8x64xf32>) {
    ^bb0(%b.in0: i1, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.select %b.in0, %b.0, %b.in1 : f32
      linalg.yield %b.1 : f32
    } -> tensor<8x64xf32>
    %t_6.0 = tensor.empty() : tensor<64x8xf32>
    %t_6 = linalg.transpose ins(%where : tensor<8x64xf32>) outs(%t_6.0 : tensor<64x8xf32>) permutation = [1, 0]
    %mm_4.0 = tensor.empty() : tensor<64x64xf32>
    %mm_4.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_4.0 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %mm_4 = linalg.matmul ins(%t_6, %arg4 : tensor<64x8xf32>, tensor<8x64xf32>) outs(%mm_4.1 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %sum_4.1 = tensor.empty() : tensor<64xf32>
    %sum_4.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_4.1 : tensor<64xf32>) -> tensor<64xf32>
    %sum_4.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%where : tensor<8x64xf32>) outs(%sum_4.2 : tensor<64xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<64xf32>
    return %nll_loss_forward, %mm_4, %sum_4.0, %mm_3, %sum_3.0 : tensor<f32>, tensor<64x64xf32>, tensor<64xf32>, tensor<10x64xf32>, tensor<10xf32>
  }
}
