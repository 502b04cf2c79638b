module attributes {wsc.optimizer = {name = "sgd", lr = 0.01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  func.func @train_step(%arg0: tensor<64x64xf32> {wsc.param = "0.weight"}, %arg1: tensor<64xf32> {wsc.param = "0.bias"}, %arg2: tensor<64x64xf32> {wsc.param = "2.weight"}, %arg3: tensor<64xf32> {wsc.param = "2.bias"}, %arg4: tensor<10x64xf32> {wsc.param = "4.weight"}, %arg5: tensor<10xf32> {wsc.param = "4.bias"}, %arg6: tensor<4096x64xf32> {wsc.input = 0 : i64}, %arg7: tensor<4096xi64> {wsc.label = 0 : i64, wsc.num_classes = 10 : i64, wsc.ignore_index = -100 : i64}) -> (tensor<f32> {wsc.loss}, tensor<64x64xf32> {wsc.grad = "0.weight"}, tensor<64xf32> {wsc.grad = "0.bias"}, tensor<64x64xf32> {wsc.grad = "2.weight"}, tensor<64xf32> {wsc.grad = "2.bias"}, tensor<10x64xf32> {wsc.grad = "4.weight"}, tensor<10xf32> {wsc.grad = "4.bias"}) {
    %t.0 = tensor.empty() : tensor<64x64xf32>
    %t = linalg.transpose ins(%arg0 : tensor<64x64xf32>) outs(%t.0 : tensor<64x64xf32>) permutation = [1, 0]
    %mm.0 = tensor.empty() : tensor<4096x64xf32>
    %cst.0 = arith.constant 0.0 : f32
    %mm.1 = linalg.fill ins(%cst.0 : f32) outs(%mm.0 : tensor<4096x64xf32>) -> tensor<4096x64xf32>
    %mm = linalg.matmul ins(%arg6, %t : tensor<4096x64xf32>, tensor<64x64xf32>) outs(%mm.1 : tensor<4096x64xf32>) -> tensor<4096x64xf32>
    %add.0 = tensor.empty() : tensor<4096x64xf32>
    %add = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg1, %mm : tensor<64xf32>, tensor<4096x64xf32>) outs(%add.0 : tensor<4096x64xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096x64xf32>
    %relu.0 = tensor.empty() : tensor<4096x64xf32>
    %relu = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add : tensor<4096x64xf32>) outs(%relu.0 : tensor<4096x64xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ugt, %b.in0, %b.0 : f32
      %b.2 = arith.select %b.1, %b.in0, %b.0 : f32
      linalg.yield %b.2 : f32
    } -> tensor<4096x64xf32>
    %t_1.0 = tensor.empty() : tensor<64x64xf32>
    %t_1 = linalg.transpose ins(%arg2 : tensor<64x64xf32>) outs(%t_1.0 : tensor<64x64xf32>) permutation = [1, 0]
    %mm_1.0 = tensor.empty() : tensor<4096x64xf32>
    %mm_1.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_1.0 : tensor<4096x64xf32>) -> tensor<4096x64xf32>
    %mm_1 = linalg.matmul ins(%relu, %t_1 : tensor<4096x64xf32>, tensor<64x64xf32>) outs(%mm_1.1 : tensor<4096x64xf32>) -> tensor<4096x64xf32>
    %add_1.0 = tensor.empty() : tensor<4096x64xf32>
    %add_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg3, %mm_1 : tensor<64xf32>, tensor<4096x64xf32>) outs(%add_1.0 : tensor<4096x64xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096x64xf32>
    %relu_1.0 = tensor.empty() : tensor<4096x64xf32>
    %relu_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add_1 : tensor<4096x64xf32>) outs(%relu_1.0 : tensor<4096x64xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ugt, %b.in0, %b.0 : f32
      %b.2 = arith.select %b.1, %b.in0, %b.0 : f32
      linalg.yield %b.2 : f32
    } -> tensor<4096x64xf32>
    %t_2.0 = tensor.empty() : tensor<64x10xf32>
    %t_2 = linalg.transpose ins(%arg4 : tensor<10x64xf32>) outs(%t_2.0 : tensor<64x10xf32>) permutation = [1, 0]
    %mm_2.0 = tensor.empty() : tensor<4096x10xf32>
    %mm_2.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_2.0 : tensor<4096x10xf32>) -> tensor<4096x10xf32>
    %mm_2 = linalg.matmul ins(%relu_1, %t_2 : tensor<4096x64xf32>, tensor<64x10xf32>) outs(%mm_2.1 : tensor<4096x10xf32>) -> tensor<4096x10xf32>
    %add_2.0 = tensor.empty() : tensor<4096x10xf32>
    %add_2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg5, %mm_2 : tensor<10xf32>, tensor<4096x10xf32>) outs(%add_2.0 : tensor<4096x10xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096x10xf32>
    %amax.1 = tensor.empty() : tensor<4096xf32>
    %cst.1 = arith.constant 0xFF800000 : f32
    %amax.2 = linalg.fill ins(%cst.1 : f32) outs(%amax.1 : tensor<4096xf32>) -> tensor<4096xf32>
    %amax.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%add_2 : tensor<4096x10xf32>) outs(%amax.2 : tensor<4096xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.maximumf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096xf32>
    %amax = tensor.expand_shape %amax.0 [[0, 1]] output_shape [4096, 1] : tensor<4096xf32> into tensor<4096x1xf32>
    %sub.0 = tensor.empty() : tensor<4096x10xf32>
    %sub = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add_2, %amax : tensor<4096x10xf32>, tensor<4096x1xf32>) outs(%sub.0 : tensor<4096x10xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.subf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096x10xf32>
    %exp.0 = tensor.empty() : tensor<4096x10xf32>
    %exp = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sub : tensor<4096x10xf32>) outs(%exp.0 : tensor<4096x10xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = math.exp %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096x10xf32>
    %sum_1.1 = tensor.empty() : tensor<4096xf32>
    %sum_1.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_1.1 : tensor<4096xf32>) -> tensor<4096xf32>
    %sum_1.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4096x10xf32>) outs(%sum_1.2 : tensor<4096xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096xf32>
    %sum_1 = tensor.expand_shape %sum_1.0 [[0, 1]] output_shape [4096, 1] : tensor<4096xf32> into tensor<4096x1xf32>
    %log.0 = tensor.empty() : tensor<4096x1xf32>
    %log = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sum_1 : tensor<4096x1xf32>) outs(%log.0 : tensor<4096x1xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = math.log %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096x1xf32>
    %sub_1.0 = tensor.empty() : tensor<4096x10xf32>
    %sub_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sub, %log : tensor<4096x10xf32>, tensor<4096x1xf32>) outs(%sub_1.0 : tensor<4096x10xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.subf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096x10xf32>
    %nll_loss_forward.0 = tensor.empty() : tensor<4096xf32>
    %nll_loss_forward.1 = linalg.fill ins(%cst.0 : f32) outs(%nll_loss_forward.0 : tensor<4096xf32>) -> tensor<4096xf32>
    %nll_loss_forward.2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg7, %sub_1 : tensor<4096xi64>, tensor<4096x10xf32>) outs(%nll_loss_forward.1 : tensor<4096xf32>) {
    ^bb0(%b.in0: i64, %b.in1: f32, %b.out: f32):
      %b.0 = linalg.index 1 : index
      %b.1 = arith.index_cast %b.0 : index to i64
      %b.2 = arith.cmpi eq, %b.1, %b.in0 : i64
      %b.3 = arith.constant 0.0 : f32
      %b.4 = arith.select %b.2, %b.in1, %b.3 : f32
      %b.5 = arith.subf %b.out, %b.4 : f32
      linalg.yield %b.5 : f32
    } -> tensor<4096xf32>
    %nll_loss_forward.3 = tensor.empty() : tensor<f32>
    %nll_loss_forward.4 = linalg.fill ins(%cst.0 : f32) outs(%nll_loss_forward.3 : tensor<f32>) -> tensor<f32>
    %nll_loss_forward.5 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%arg7 : tensor<4096xi64>) outs(%nll_loss_forward.4 : tensor<f32>) {
    ^bb0(%b.in0: i64, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.constant -100 : i64
      %b.2 = arith.cmpi ne, %b.in0, %b.1 : i64
      %b.3 = arith.constant 1.0 : f32
      %b.4 = arith.select %b.2, %b.3, %b.0 : f32
      %b.5 = arith.addf %b.out, %b.4 : f32
      linalg.yield %b.5 : f32
    } -> tensor<f32>
    %nll_loss_forward.6 = tensor.empty() : tensor<f32>
    %nll_loss_forward.7 = linalg.fill ins(%cst.0 : f32) outs(%nll_loss_forward.6 : tensor<f32>) -> tensor<f32>
    %nll_loss_forward.8 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%nll_loss_forward.2 : tensor<4096xf32>) outs(%nll_loss_forward.7 : tensor<f32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.out, %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<f32>
    %nll_loss_forward.9 = tensor.empty() : tensor<f32>
    %nll_loss_forward = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%nll_loss_forward.8, %nll_loss_forward.5 : tensor<f32>, tensor<f32>) outs(%nll_loss_forward.9 : tensor<f32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.divf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<f32>
    %nll_loss_backward.0 = tensor.empty() : tensor<4096x10xf32>
    %nll_loss_backward = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg7, %nll_loss_forward.5 : tensor<4096xi64>, tensor<f32>) outs(%nll_loss_backward.0 : tensor<4096x10xf32>) {
    ^bb0(%b.in0: i64, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 1.0 : f32
      %b.1 = arith.divf %b.0, %b.in1 : f32
      %b.2 = arith.negf %b.1 : f32
      %b.3 = linalg.index 1 : index
      %b.4 = arith.index_cast %b.3 : index to i64
      %b.5 = arith.cmpi eq, %b.4, %b.in0 : i64
      %b.6 = arith.constant 0.0 : f32
      %b.7 = arith.select %b.5, %b.2, %b.6 : f32
      linalg.yield %b.7 : f32
    } -> tensor<4096x10xf32>
    %exp_1.0 = tensor.empty() : tensor<4096x10xf32>
    %exp_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sub_1 : tensor<4096x10xf32>) outs(%exp_1.0 : tensor<4096x10xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = math.exp %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096x10xf32>
    %sum_2.1 = tensor.empty() : tensor<4096xf32>
    %sum_2.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_2.1 : tensor<4096xf32>) -> tensor<4096xf32>
    %sum_2.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%nll_loss_backward : tensor<4096x10xf32>) outs(%sum_2.2 : tensor<4096xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096xf32>
    %sum_2 = tensor.expand_shape %sum_2.0 [[0, 1]] output_shape [4096, 1] : tensor<4096xf32> into tensor<4096x1xf32>
    %mul_6.0 = tensor.empty() : tensor<4096x10xf32>
    %mul_6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%exp_1, %sum_2 : tensor<4096x10xf32>, tensor<4096x1xf32>) outs(%mul_6.0 : tensor<4096x10xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.mulf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096x10xf32>
    %sub_2.0 = tensor.empty() : tensor<4096x10xf32>
    %sub_2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%nll_loss_backward, %mul_6 : tensor<4096x10xf32>, tensor<4096x10xf32>) outs(%sub_2.0 : tensor<4096x10xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.subf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4096x10xf32>
    %mm_3.0 = tensor.empty() : tensor<4096x64xf32>
    %mm_3.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_3.0 : tensor<4096x64xf32>) -> tensor<4096x64xf32>
    %mm_3 = linalg.matmul ins(%sub_2, %arg4 : tensor<4096x10xf32>, tensor<10x64xf32>) outs(%mm_3.1 : tensor<4096x64xf32>) -> tensor<4096x64xf32>
    %t_4.0 = tensor.empty() : tensor<10x4096xf32>
    %t_4 = linalg.transpose ins(%sub_2 : tensor<4096x10xf32>) outs(%t_4.0 : tensor<10x4096xf32>) permutation = [1, 0]
    %mm_4.0 = tensor.empty() : tensor<10x64xf32>
    %mm_4.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_4.0 : tensor<10x64xf32>) -> tensor<10x64xf32>
    %mm_4 = linalg.matmul ins(%t_4, %relu_1 : tensor<10x4096xf32>, tensor<4096x64xf32>) outs(%mm_4.1 : tensor<10x64xf32>) -> tensor<10x64xf32>
    %sum_3.1 = tensor.empty() : tensor<10xf32>
    %sum_3.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_3.1 : tensor<10xf32>) -> tensor<10xf32>
    %sum_3.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%sub_2 : tensor<4096x10xf32>) outs(%sum_3.2 : tensor<10xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<10xf32>
    %le.0 = tensor.empty() : tensor<4096x64xi1>
    %le = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%relu_1 : tensor<4096x64xf32>) outs(%le.0 : tensor<4096x64xi1>) {
    ^bb0(%b.in0: f32, %b.out: i1):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ole, %b.in0, %b.0 : f32
      linalg.yield %b.1 : i1
    } -> tensor<4096x64xi1>
    %where.0 = tensor.empty() : tensor<4096x64xf32>
    %where = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%le, %mm_3 : tensor<4096x64xi1>, tensor<4096x64xf32>) outs(%where.0 : tensor<4096x64xf32>) {
    ^bb0(%b.in0: i1, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.select %b.in0, %b.0, %b.in1 : f32
      linalg.yield %b.1 : f32
    } -> tensor<4096x64xf32>
    %mm_5.0 = tensor.empty() : tensor<4096x64xf32>
    %mm_5.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_5.0 : tensor<4096x64xf32>) -> tensor<4096x64xf32>
    %mm_5 = linalg.matmul ins(%where, %arg2 : tensor<4096x64xf32>, tensor<64x64xf32>) outs(%mm_5.1 : tensor<4096x64xf32>) -> tensor<4096x64xf32>
    %t_8.0 = tensor.empty() : tensor<64x4096xf32>
    %t_8 = linalg.transpose ins(%where : tensor<4096x64xf32>) outs(%t_8.0 : tensor<64x4096xf32>) permutation = [1, 0]
    %mm_6.0 = tensor.empty() : tensor<64x64xf32>
    %mm_6.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_6.0 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %mm_6 = linalg.matmul ins(%t_8, %relu : tensor<64x4096xf32>, tensor<4096x64xf32>) outs(%mm_6.1 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %sum_4.1 = tensor.empty() : tensor<64xf32>
    %sum_4.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_4.1 : tensor<64xf32>) -> tensor<64xf32>
    %sum_4.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%where : tensor<4096x64xf32>) outs(%sum_4.2 : tensor<64xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<64xf32>
    %le_1.0 = tensor.empty() : tensor<4096x64xi1>
    %le_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%relu : tensor<4096x64xf32>) outs(%le_1.0 : tensor<4096x64xi1>) {
    ^bb0(%b.in0: f32, %b.out: i1):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ole, %b.in0, %b.0 : f32
      linalg.yield %b.1 : i1
    } -> tensor<4096x64xi1>
    %where_1.0 = tensor.empty() : tensor<4096x64xf32>
    %where_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%le_1, %mm_5 : tensor<4096x64xi1>, tensor<4096x64xf32>) outs(%where_1.0 : tensor<4096x64xf32>) {
    ^bb0(%b.in0: i1, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.select %b.in0, %b.0, %b.in1 : f32
      linalg.yield %b.1 : f32
    } -> tensor<4096x64xf32>
    %t_11.0 = tensor.empty() : tensor<64x4096xf32>
    %t_11 = linalg.transpose ins(%where_1 : tensor<4096x64xf32>) outs(%t_11.0 : tensor<64x4096xf32>) permutation = [1, 0]
    %mm_7.0 = tensor.empty() : tensor<64x64xf32>
    %mm_7.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_7.0 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %mm_7 = linalg.matmul ins(%t_11, %arg6 : tensor<64x4096xf32>, tensor<4096x64xf32>) outs(%mm_7.1 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %sum_5.1 = tensor.empty() : tensor<64xf32>
    %sum_5.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_5.1 : tensor<64xf32>) -> tensor<64xf32>
    %sum_5.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%where_1 : tensor<4096x64xf32>) outs(%sum_5.2 : tensor<64xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<64xf32>
    return %nll_loss_forward, %mm_7, %sum_5.0, %mm_6, %sum_4.0, %mm_4, %sum_3.0 : tensor<f32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<10x64xf32>, tensor<10xf32>
  }
}
