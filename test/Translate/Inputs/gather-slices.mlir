// An embedding gather, then the batch merged *inside* dim 0 ([seq, batch]
// collapsed, as nn.MultiheadAttention does), a strided slice, and back to
// batch-first. Used by schedule-gather.mlir and python/tests/test_emitter.py.
#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @forward(%table: tensor<10x4xf32> {wsc.param = "emb.weight"}, %ids: tensor<2x3xi64> {wsc.input = 0 : i64}) -> (tensor<2x3x2xf32> {wsc.output = 0 : i64}) {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %g = linalg.generic {indexing_maps = [#ids, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x3xi64>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%id: i64, %out: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<10x4xf32>
    linalg.yield %v : f32
  } -> tensor<2x3x4xf32>
  %et = tensor.empty() : tensor<3x2x4xf32>
  %t = linalg.transpose ins(%g : tensor<2x3x4xf32>) outs(%et : tensor<3x2x4xf32>) permutation = [1, 0, 2]
  %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<3x2x4xf32> into tensor<6x4xf32>
  %s = tensor.extract_slice %c[0, 1] [6, 2] [1, 2] : tensor<6x4xf32> to tensor<6x2xf32>
  %x = tensor.expand_shape %s [[0, 1], [2]] output_shape [3, 2, 2] : tensor<6x2xf32> into tensor<3x2x2xf32>
  %eb = tensor.empty() : tensor<2x3x2xf32>
  %b = linalg.transpose ins(%x : tensor<3x2x2xf32>) outs(%eb : tensor<2x3x2xf32>) permutation = [1, 0, 2]
  return %b : tensor<2x3x2xf32>
}
