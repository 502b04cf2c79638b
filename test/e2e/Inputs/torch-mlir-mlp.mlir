// A two-layer MLP as torch-mlir's LINALG_ON_TENSORS output prints it: no
// wsc attributes, fc1's weight (4x8, (k / 16) - 1 in row-major order) and
// bias as dense_resource blobs, fc2's weight an ml_program global, a shape
// check, fill inits, and torch-mlir's unused @global_seed.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module attributes {torch.debug_module_name = "MLP"} {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  ml_program.global private @fc2.weight(dense<[[1.0, -1.0, 0.5, 2.0], [0.0, 1.0, -2.0, 0.25]]> : tensor<2x4xf32>) : tensor<2x4xf32>
  func.func @forward(%arg0: tensor<6x8xf32>) -> tensor<6x2xf32> {
    %cst = arith.constant dense_resource<torch_tensor_4_8_torch.float32> : tensor<4x8xf32>
    %cst_0 = arith.constant dense_resource<torch_tensor_4_torch.float32> : tensor<4xf32>
    %cst_1 = arith.constant 0.000000e+00 : f32
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %0 = tensor.empty() : tensor<8x4xf32>
    %transposed = linalg.transpose ins(%cst : tensor<4x8xf32>) outs(%0 : tensor<8x4xf32>) permutation = [1, 0]
    %dim = tensor.dim %arg0, %c1 : tensor<6x8xf32>
    %dim_2 = tensor.dim %transposed, %c0 : tensor<8x4xf32>
    %1 = arith.cmpi eq, %dim, %dim_2 : index
    cf.assert %1, "mismatching contracting dimension for torch.aten.mm"
    %2 = tensor.empty() : tensor<6x4xf32>
    %3 = linalg.fill ins(%cst_1 : f32) outs(%2 : tensor<6x4xf32>) -> tensor<6x4xf32>
    %4 = linalg.matmul ins(%arg0, %transposed : tensor<6x8xf32>, tensor<8x4xf32>) outs(%3 : tensor<6x4xf32>) -> tensor<6x4xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%4, %cst_0 : tensor<6x4xf32>, tensor<4xf32>) outs(%2 : tensor<6x4xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %12 = arith.addf %in, %in_3 : f32
      %13 = arith.cmpf ugt, %12, %cst_1 : f32
      %14 = arith.select %13, %12, %cst_1 : f32
      linalg.yield %14 : f32
    } -> tensor<6x4xf32>
    %6 = ml_program.global_load_const @fc2.weight : tensor<2x4xf32>
    %7 = tensor.empty() : tensor<4x2xf32>
    %transposed_4 = linalg.transpose ins(%6 : tensor<2x4xf32>) outs(%7 : tensor<4x2xf32>) permutation = [1, 0]
    %8 = tensor.empty() : tensor<6x2xf32>
    %9 = linalg.fill ins(%cst_1 : f32) outs(%8 : tensor<6x2xf32>) -> tensor<6x2xf32>
    %10 = linalg.matmul ins(%5, %transposed_4 : tensor<6x4xf32>, tensor<4x2xf32>) outs(%9 : tensor<6x2xf32>) -> tensor<6x2xf32>
    return %10 : tensor<6x2xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_4_8_torch.float32: "0x04000000000080BF000070BF000060BF000050BF000040BF000030BF000020BF000010BF000000BF0000E0BE0000C0BE0000A0BE000080BE000040BE000000BE000080BD000000000000803D0000003E0000403E0000803E0000A03E0000C03E0000E03E0000003F0000103F0000203F0000303F0000403F0000503F0000603F0000703F",
      torch_tensor_4_torch.float32: "0x040000000000003F000080BE000000000000803F"
    }
  }
#-}
