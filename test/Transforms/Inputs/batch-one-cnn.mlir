func.func @forward(%arg0: tensor<1x1x6x6xf32>) -> (tensor<1x5xf32>, tensor<1x72x1xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %filter = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %w = arith.constant dense<2.500000e-01> : tensor<72x5xf32>
  %padded = tensor.pad %arg0 low[%c0, %c0, %c1, %c1] high[%c0, %c0, %c1, %c1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x1x6x6xf32> to tensor<1x1x8x8xf32>
  %0 = tensor.empty() : tensor<1x2x6x6xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %filter : tensor<1x1x8x8xf32>, tensor<2x1x3x3xf32>) outs(%1 : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %collapsed = tensor.collapse_shape %2 [[0], [1, 2, 3]] : tensor<1x2x6x6xf32> into tensor<1x72xf32>
  %expanded = tensor.expand_shape %collapsed [[0], [1, 2]] output_shape [1, 72, 1] : tensor<1x72xf32> into tensor<1x72x1xf32>
  %back = tensor.collapse_shape %expanded [[0], [1, 2]] : tensor<1x72x1xf32> into tensor<1x72xf32>
  %3 = tensor.empty() : tensor<1x5xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<1x5xf32>) -> tensor<1x5xf32>
  %5 = linalg.matmul ins(%back, %w : tensor<1x72xf32>, tensor<72x5xf32>) outs(%4 : tensor<1x5xf32>) -> tensor<1x5xf32>
  return %5, %expanded : tensor<1x5xf32>, tensor<1x72x1xf32>
}
