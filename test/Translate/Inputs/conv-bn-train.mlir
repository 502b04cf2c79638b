module attributes {wsc.optimizer = {name = "sgd", lr = 0.1 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  func.func @train_step(%arg0: tensor<4x3x3x3xf32> {wsc.param = "0.weight"}, %arg1: tensor<4xf32> {wsc.param = "0.bias"}, %arg2: tensor<4xf32> {wsc.param = "1.weight"}, %arg3: tensor<4xf32> {wsc.param = "1.bias"}, %arg4: tensor<5x4xf32> {wsc.param = "5.weight"}, %arg5: tensor<5xf32> {wsc.param = "5.bias"}, %arg6: tensor<4xf32> {wsc.buffer = "1.running_mean"}, %arg7: tensor<4xf32> {wsc.buffer = "1.running_var"}, %arg8: tensor<i64> {wsc.buffer = "1.num_batches_tracked"}, %arg9: tensor<4x3x6x6xf32> {wsc.input = 0 : i64}, %arg10: tensor<4xi64> {wsc.label = 0 : i64, wsc.num_classes = 5 : i64}) -> (tensor<f32> {wsc.loss}, tensor<4x3x3x3xf32> {wsc.grad = "0.weight"}, tensor<4xf32> {wsc.grad = "0.bias"}, tensor<4xf32> {wsc.grad = "1.weight"}, tensor<4xf32> {wsc.grad = "1.bias"}, tensor<5x4xf32> {wsc.grad = "5.weight"}, tensor<5xf32> {wsc.grad = "5.bias"}, tensor<4xf32> {wsc.buffer_update = "1.running_mean"}, tensor<4xf32> {wsc.buffer_update = "1.running_var"}, tensor<i64> {wsc.buffer_update = "1.num_batches_tracked"}) {
    %cst.0 = arith.constant 0.0 : f32
    %convolution.0 = tensor.pad %arg9 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%b.i0: index, %b.i1: index, %b.i2: index, %b.i3: index):
      tensor.yield %cst.0 : f32
    } : tensor<4x3x6x6xf32> to tensor<4x3x8x8xf32>
    %convolution.2 = tensor.empty() : tensor<4x4x6x6xf32>
    %convolution.3 = linalg.fill ins(%cst.0 : f32) outs(%convolution.2 : tensor<4x4x6x6xf32>) -> tensor<4x4x6x6xf32>
    %convolution.1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<[1, 1]> : vector<2xi64>} ins(%convolution.0, %arg0 : tensor<4x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%convolution.3 : tensor<4x4x6x6xf32>) -> tensor<4x4x6x6xf32>
    %convolution.4 = tensor.empty() : tensor<4x4x6x6xf32>
    %convolution = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%convolution.1, %arg1 : tensor<4x4x6x6xf32>, tensor<4xf32>) outs(%convolution.4 : tensor<4x4x6x6xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4x4x6x6xf32>
    %add_.0 = tensor.empty() : tensor<i64>
    %add_ = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%arg8 : tensor<i64>) outs(%add_.0 : tensor<i64>) {
    ^bb0(%b.in0: i64, %b.out: i64):
      %b.0 = arith.constant 1 : i64
      %b.1 = arith.addi %b.in0, %b.0 : i64
      linalg.yield %b.1 : i64
    } -> tensor<i64>
    %native_batch_norm.0 = tensor.empty() : tensor<4xf32>
    %native_batch_norm.1 = linalg.fill ins(%cst.0 : f32) outs(%native_batch_norm.0 : tensor<4xf32>) -> tensor<4xf32>
    %native_batch_norm.2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%convolution : tensor<4x4x6x6xf32>) outs(%native_batch_norm.1 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.out, %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4xf32>
    %native_batch_norm.4 = tensor.empty() : tensor<4xf32>
    %native_batch_norm.3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%native_batch_norm.2 : tensor<4xf32>) outs(%native_batch_norm.4 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 144.0 : f32
      %b.1 = arith.divf %b.in0, %b.0 : f32
      linalg.yield %b.1 : f32
    } -> tensor<4xf32>
    %native_batch_norm.5 = tensor.empty() : tensor<4xf32>
    %native_batch_norm.6 = linalg.fill ins(%cst.0 : f32) outs(%native_batch_norm.5 : tensor<4xf32>) -> tensor<4xf32>
    %native_batch_norm.7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%convolution, %native_batch_norm.3 : tensor<4x4x6x6xf32>, tensor<4xf32>) outs(%native_batch_norm.6 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.subf %b.in0, %b.in1 : f32
      %b.1 = arith.mulf %b.0, %b.0 : f32
      %b.2 = arith.addf %b.out, %b.1 : f32
      linalg.yield %b.2 : f32
    } -> tensor<4xf32>
    %native_batch_norm.9 = tensor.empty() : tensor<4xf32>
    %native_batch_norm.8 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%native_batch_norm.7 : tensor<4xf32>) outs(%native_batch_norm.9 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 9.999999747378752e-06 : f32
      %b.1 = arith.constant 144.0 : f32
      %b.2 = arith.divf %b.in0, %b.1 : f32
      %b.3 = arith.addf %b.2, %b.0 : f32
      %b.4 = math.sqrt %b.3 : f32
      %b.5 = arith.constant 1.0 : f32
      %b.6 = arith.divf %b.5, %b.4 : f32
      linalg.yield %b.6 : f32
    } -> tensor<4xf32>
    %native_batch_norm.11 = tensor.empty() : tensor<4xf32>
    %native_batch_norm.10 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%native_batch_norm.3, %arg6 : tensor<4xf32>, tensor<4xf32>) outs(%native_batch_norm.11 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 0.10000000149011612 : f32
      %b.1 = arith.mulf %b.0, %b.in0 : f32
      %b.2 = arith.constant 0.8999999761581421 : f32
      %b.3 = arith.mulf %b.2, %b.in1 : f32
      %b.4 = arith.addf %b.1, %b.3 : f32
      linalg.yield %b.4 : f32
    } -> tensor<4xf32>
    %native_batch_norm.13 = tensor.empty() : tensor<4xf32>
    %native_batch_norm.12 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%native_batch_norm.7 : tensor<4xf32>) outs(%native_batch_norm.13 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 143.0 : f32
      %b.1 = arith.divf %b.in0, %b.0 : f32
      linalg.yield %b.1 : f32
    } -> tensor<4xf32>
    %native_batch_norm.15 = tensor.empty() : tensor<4xf32>
    %native_batch_norm.14 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%native_batch_norm.12, %arg7 : tensor<4xf32>, tensor<4xf32>) outs(%native_batch_norm.15 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 0.10000000149011612 : f32
      %b.1 = arith.mulf %b.0, %b.in0 : f32
      %b.2 = arith.constant 0.8999999761581421 : f32
      %b.3 = arith.mulf %b.2, %b.in1 : f32
      %b.4 = arith.addf %b.1, %b.3 : f32
      linalg.yield %b.4 : f32
    } -> tensor<4xf32>
    %native_batch_norm.17 = tensor.empty() : tensor<4xf32>
    %native_batch_norm.16 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%native_batch_norm.8, %arg2 : tensor<4xf32>, tensor<4xf32>) outs(%native_batch_norm.17 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.mulf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4xf32>
    %native_batch_norm.19 = tensor.empty() : tensor<4xf32>
    %native_batch_norm.18 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%native_batch_norm.3, %native_batch_norm.16, %arg3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%native_batch_norm.19 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.in2: f32, %b.out: f32):
      %b.0 = arith.mulf %b.in0, %b.in1 : f32
      %b.1 = arith.subf %b.in2, %b.0 : f32
      linalg.yield %b.1 : f32
    } -> tensor<4xf32>
    %native_batch_norm.20 = tensor.empty() : tensor<4x4x6x6xf32>
    %native_batch_norm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%convolution, %native_batch_norm.16, %native_batch_norm.18 : tensor<4x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>) outs(%native_batch_norm.20 : tensor<4x4x6x6xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.in2: f32, %b.out: f32):
      %b.0 = arith.mulf %b.in0, %b.in1 : f32
      %b.1 = arith.addf %b.0, %b.in2 : f32
      linalg.yield %b.1 : f32
    } -> tensor<4x4x6x6xf32>
    %relu.0 = tensor.empty() : tensor<4x4x6x6xf32>
    %relu = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%native_batch_norm : tensor<4x4x6x6xf32>) outs(%relu.0 : tensor<4x4x6x6xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ugt, %b.in0, %b.0 : f32
      %b.2 = arith.select %b.1, %b.in0, %b.0 : f32
      linalg.yield %b.2 : f32
    } -> tensor<4x4x6x6xf32>
    %mean.2 = tensor.empty() : tensor<4x4xf32>
    %mean.3 = linalg.fill ins(%cst.0 : f32) outs(%mean.2 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %mean.1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%relu : tensor<4x4x6x6xf32>) outs(%mean.3 : tensor<4x4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<4x4xf32>
    %mean.0 = tensor.expand_shape %mean.1 [[0], [1, 2, 3]] output_shape [4, 4, 1, 1] : tensor<4x4xf32> into tensor<4x4x1x1xf32>
    %mean.4 = tensor.empty() : tensor<4x4x1x1xf32>
    %mean = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mean.0 : tensor<4x4x1x1xf32>) outs(%mean.4 : tensor<4x4x1x1xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 36.0 : f32
      %b.1 = arith.divf %b.in0, %b.0 : f32
      linalg.yield %b.1 : f32
    } -> tensor<4x4x1x1xf32>
    %_reshape_alias = tensor.collapse_shape %mean [[0], [1, 2, 3]] : tensor<4x4x1x1xf32> into tensor<4x4xf32>
    %t.0 = tensor.empty() : tensor<4x5xf32>
    %t = linalg.transpose ins(%arg4 : tensor<5x4xf32>) outs(%t.0 : tensor<4x5xf32>) permutation = [1, 0]
    %mm.0 = tensor.empty() : tensor<4x5xf32>
    %mm.1 = linalg.fill ins(%cst.0 : f32) outs(%mm.0 : tensor<4x5xf32>) -> tensor<4x5xf32>
    %mm = linalg.matmul ins(%_reshape_alias, %t : tensor<4x4xf32>, tensor<4x5xf32>) outs(%mm.1 : tensor<4x5xf32>) -> tensor<4x5xf32>
    %add.0 = tensor.empty() : tensor<4x5xf32>
    %add = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg5, %mm : tensor<5xf32>, tensor<4x5xf32>) outs(%add.0 : tensor<4x5xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4x5xf32>
    %amax.1 = tensor.empty() : tensor<4xf32>
    %cst.1 = arith.constant 0xFF800000 : f32
    %amax.2 = linalg.fill ins(%cst.1 : f32) outs(%amax.1 : tensor<4xf32>) -> tensor<4xf32>
    %amax.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%add : tensor<4x5xf32>) outs(%amax.2 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.maximumf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<4xf32>
    %amax = tensor.expand_shape %amax.0 [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
    %sub.0 = tensor.empty() : tensor<4x5xf32>
    %sub = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%add, %amax : tensor<4x5xf32>, tensor<4x1xf32>) outs(%sub.0 : tensor<4x5xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.subf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4x5xf32>
    %exp.0 = tensor.empty() : tensor<4x5xf32>
    %exp = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sub : tensor<4x5xf32>) outs(%exp.0 : tensor<4x5xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = math.exp %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4x5xf32>
    %sum_1.1 = tensor.empty() : tensor<4xf32>
    %sum_1.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_1.1 : tensor<4xf32>) -> tensor<4xf32>
    %sum_1.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4x5xf32>) outs(%sum_1.2 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<4xf32>
    %sum_1 = tensor.expand_shape %sum_1.0 [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
    %log.0 = tensor.empty() : tensor<4x1xf32>
    %log = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sum_1 : tensor<4x1xf32>) outs(%log.0 : tensor<4x1xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = math.log %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4x1xf32>
    %sub_1.0 = tensor.empty() : tensor<4x5xf32>
    %sub_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sub, %log : tensor<4x5xf32>, tensor<4x1xf32>) outs(%sub_1.0 : tensor<4x5xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.subf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4x5xf32>
    %nll_loss_forward.1 = tensor.empty() : tensor<f32>
    %nll_loss_forward.2 = linalg.fill ins(%cst.0 : f32) outs(%nll_loss_forward.1 : tensor<f32>) -> tensor<f32>
    %nll_loss_forward.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%sub_1, %arg10 : tensor<4x5xf32>, tensor<4xi64>) outs(%nll_loss_forward.2 : tensor<f32>) {
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
      %b.0 = arith.constant 4.0 : f32
      %b.1 = arith.divf %b.in0, %b.0 : f32
      linalg.yield %b.1 : f32
    } -> tensor<f32>
    %nll_loss_backward.0 = tensor.empty() : tensor<4x5xf32>
    %nll_loss_backward = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg10 : tensor<4xi64>) outs(%nll_loss_backward.0 : tensor<4x5xf32>) {
    ^bb0(%b.in0: i64, %b.out: f32):
      %b.0 = arith.constant 1.0 : f32
      %b.1 = arith.constant 4.0 : f32
      %b.2 = arith.divf %b.0, %b.1 : f32
      %b.3 = arith.negf %b.2 : f32
      %b.4 = linalg.index 1 : index
      %b.5 = arith.index_cast %b.4 : index to i64
      %b.6 = arith.cmpi eq, %b.5, %b.in0 : i64
      %b.7 = arith.constant 0.0 : f32
      %b.8 = arith.select %b.6, %b.3, %b.7 : f32
      linalg.yield %b.8 : f32
    } -> tensor<4x5xf32>
    %exp_1.0 = tensor.empty() : tensor<4x5xf32>
    %exp_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%sub_1 : tensor<4x5xf32>) outs(%exp_1.0 : tensor<4x5xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = math.exp %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4x5xf32>
    %sum_2.1 = tensor.empty() : tensor<4xf32>
    %sum_2.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_2.1 : tensor<4xf32>) -> tensor<4xf32>
    %sum_2.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%nll_loss_backward : tensor<4x5xf32>) outs(%sum_2.2 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<4xf32>
    %sum_2 = tensor.expand_shape %sum_2.0 [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
    %mul_2.0 = tensor.empty() : tensor<4x5xf32>
    %mul_2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%exp_1, %sum_2 : tensor<4x5xf32>, tensor<4x1xf32>) outs(%mul_2.0 : tensor<4x5xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.mulf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4x5xf32>
    %sub_2.0 = tensor.empty() : tensor<4x5xf32>
    %sub_2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%nll_loss_backward, %mul_2 : tensor<4x5xf32>, tensor<4x5xf32>) outs(%sub_2.0 : tensor<4x5xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.subf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4x5xf32>
    %mm_1.0 = tensor.empty() : tensor<4x4xf32>
    %mm_1.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_1.0 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %mm_1 = linalg.matmul ins(%sub_2, %arg4 : tensor<4x5xf32>, tensor<5x4xf32>) outs(%mm_1.1 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %t_2.0 = tensor.empty() : tensor<5x4xf32>
    %t_2 = linalg.transpose ins(%sub_2 : tensor<4x5xf32>) outs(%t_2.0 : tensor<5x4xf32>) permutation = [1, 0]
    %mm_2.0 = tensor.empty() : tensor<5x4xf32>
    %mm_2.1 = linalg.fill ins(%cst.0 : f32) outs(%mm_2.0 : tensor<5x4xf32>) -> tensor<5x4xf32>
    %mm_2 = linalg.matmul ins(%t_2, %_reshape_alias : tensor<5x4xf32>, tensor<4x4xf32>) outs(%mm_2.1 : tensor<5x4xf32>) -> tensor<5x4xf32>
    %sum_3.1 = tensor.empty() : tensor<5xf32>
    %sum_3.2 = linalg.fill ins(%cst.0 : f32) outs(%sum_3.1 : tensor<5xf32>) -> tensor<5xf32>
    %sum_3.0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%sub_2 : tensor<4x5xf32>) outs(%sum_3.2 : tensor<5xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<5xf32>
    %_reshape_alias_1 = tensor.expand_shape %mm_1 [[0], [1, 2, 3]] output_shape [4, 4, 1, 1] : tensor<4x4xf32> into tensor<4x4x1x1xf32>
    %expand.0 = tensor.empty() : tensor<4x4x6x6xf32>
    %expand = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%_reshape_alias_1 : tensor<4x4x1x1xf32>) outs(%expand.0 : tensor<4x4x6x6xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      linalg.yield %b.in0 : f32
    } -> tensor<4x4x6x6xf32>
    %div.0 = tensor.empty() : tensor<4x4x6x6xf32>
    %div = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expand : tensor<4x4x6x6xf32>) outs(%div.0 : tensor<4x4x6x6xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 36.0 : f32
      %b.1 = arith.divf %b.in0, %b.0 : f32
      linalg.yield %b.1 : f32
    } -> tensor<4x4x6x6xf32>
    %le.0 = tensor.empty() : tensor<4x4x6x6xi1>
    %le = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%relu : tensor<4x4x6x6xf32>) outs(%le.0 : tensor<4x4x6x6xi1>) {
    ^bb0(%b.in0: f32, %b.out: i1):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.cmpf ole, %b.in0, %b.0 : f32
      linalg.yield %b.1 : i1
    } -> tensor<4x4x6x6xi1>
    %where.0 = tensor.empty() : tensor<4x4x6x6xf32>
    %where = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%le, %div : tensor<4x4x6x6xi1>, tensor<4x4x6x6xf32>) outs(%where.0 : tensor<4x4x6x6xf32>) {
    ^bb0(%b.in0: i1, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 0.0 : f32
      %b.1 = arith.select %b.in0, %b.0, %b.in1 : f32
      linalg.yield %b.1 : f32
    } -> tensor<4x4x6x6xf32>
    %native_batch_norm_backward.0 = tensor.empty() : tensor<4xf32>
    %native_batch_norm_backward.1 = linalg.fill ins(%cst.0 : f32) outs(%native_batch_norm_backward.0 : tensor<4xf32>) -> tensor<4xf32>
    %native_batch_norm_backward.2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%where : tensor<4x4x6x6xf32>) outs(%native_batch_norm_backward.1 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.out, %b.in0 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4xf32>
    %native_batch_norm_backward.3 = tensor.empty() : tensor<4xf32>
    %native_batch_norm_backward.4 = linalg.fill ins(%cst.0 : f32) outs(%native_batch_norm_backward.3 : tensor<4xf32>) -> tensor<4xf32>
    %native_batch_norm_backward.5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%where, %convolution, %native_batch_norm.3 : tensor<4x4x6x6xf32>, tensor<4x4x6x6xf32>, tensor<4xf32>) outs(%native_batch_norm_backward.4 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.in2: f32, %b.out: f32):
      %b.0 = arith.subf %b.in1, %b.in2 : f32
      %b.1 = arith.mulf %b.in0, %b.0 : f32
      %b.2 = arith.addf %b.out, %b.1 : f32
      linalg.yield %b.2 : f32
    } -> tensor<4xf32>
    %native_batch_norm_backward.7 = tensor.empty() : tensor<4xf32>
    %native_batch_norm_backward.6 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%native_batch_norm.8, %arg2 : tensor<4xf32>, tensor<4xf32>) outs(%native_batch_norm_backward.7 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.mulf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4xf32>
    %native_batch_norm_backward.9 = tensor.empty() : tensor<4xf32>
    %native_batch_norm_backward.8 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%native_batch_norm_backward.5, %native_batch_norm.8 : tensor<4xf32>, tensor<4xf32>) outs(%native_batch_norm_backward.9 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.constant 144.0 : f32
      %b.1 = arith.mulf %b.in0, %b.in1 : f32
      %b.2 = arith.mulf %b.1, %b.in1 : f32
      %b.3 = arith.divf %b.2, %b.0 : f32
      linalg.yield %b.3 : f32
    } -> tensor<4xf32>
    %native_batch_norm_backward.11 = tensor.empty() : tensor<4xf32>
    %native_batch_norm_backward.10 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%native_batch_norm_backward.2 : tensor<4xf32>) outs(%native_batch_norm_backward.11 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.constant 144.0 : f32
      %b.1 = arith.divf %b.in0, %b.0 : f32
      linalg.yield %b.1 : f32
    } -> tensor<4xf32>
    %native_batch_norm_backward.13 = tensor.empty() : tensor<4x4x6x6xf32>
    %native_batch_norm_backward.12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%where, %convolution, %native_batch_norm.3, %native_batch_norm_backward.8, %native_batch_norm_backward.10, %native_batch_norm_backward.6 : tensor<4x4x6x6xf32>, tensor<4x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%native_batch_norm_backward.13 : tensor<4x4x6x6xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.in2: f32, %b.in3: f32, %b.in4: f32, %b.in5: f32, %b.out: f32):
      %b.0 = arith.subf %b.in1, %b.in2 : f32
      %b.1 = arith.mulf %b.0, %b.in3 : f32
      %b.2 = arith.subf %b.in0, %b.in4 : f32
      %b.3 = arith.subf %b.2, %b.1 : f32
      %b.4 = arith.mulf %b.3, %b.in5 : f32
      linalg.yield %b.4 : f32
    } -> tensor<4x4x6x6xf32>
    %native_batch_norm_backward.15 = tensor.empty() : tensor<4xf32>
    %native_batch_norm_backward.14 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%native_batch_norm_backward.5, %native_batch_norm.8 : tensor<4xf32>, tensor<4xf32>) outs(%native_batch_norm_backward.15 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.mulf %b.in0, %b.in1 : f32
      linalg.yield %b.0 : f32
    } -> tensor<4xf32>
    %convolution_backward.0 = tensor.pad %arg9 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%b.i0: index, %b.i1: index, %b.i2: index, %b.i3: index):
      tensor.yield %cst.0 : f32
    } : tensor<4x3x6x6xf32> to tensor<4x3x8x8xf32>
    %convolution_backward.1 = tensor.empty() : tensor<4x3x3x3xf32>
    %convolution_backward.2 = linalg.fill ins(%cst.0 : f32) outs(%convolution_backward.1 : tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32>
    %convolution_backward.3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%native_batch_norm_backward.12, %convolution_backward.0 : tensor<4x4x6x6xf32>, tensor<4x3x8x8xf32>) outs(%convolution_backward.2 : tensor<4x3x3x3xf32>) {
    ^bb0(%b.in0: f32, %b.in1: f32, %b.out: f32):
      %b.0 = arith.mulf %b.in0, %b.in1 : f32
      %b.1 = arith.addf %b.out, %b.0 : f32
      linalg.yield %b.1 : f32
    } -> tensor<4x3x3x3xf32>
    %convolution_backward.5 = tensor.empty() : tensor<4xf32>
    %convolution_backward.6 = linalg.fill ins(%cst.0 : f32) outs(%convolution_backward.5 : tensor<4xf32>) -> tensor<4xf32>
    %convolution_backward.4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%native_batch_norm_backward.12 : tensor<4x4x6x6xf32>) outs(%convolution_backward.6 : tensor<4xf32>) {
    ^bb0(%b.in0: f32, %b.out: f32):
      %b.0 = arith.addf %b.in0, %b.out : f32
      linalg.yield %b.0 : f32
    } -> tensor<4xf32>
    return %nll_loss_forward, %convolution_backward.3, %convolution_backward.4, %native_batch_norm_backward.14, %native_batch_norm_backward.2, %mm_2, %sum_3.0, %native_batch_norm.10, %native_batch_norm.14, %add_ : tensor<f32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<5x4xf32>, tensor<5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>
  }
}
