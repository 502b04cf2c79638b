//===- OpKindsTest.cpp - fills and transposes in either form --------------===//

#include "wsc/Analysis/OpKinds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// The function's results, in order, and the module that holds them.
struct Parsed {
  OwningOpRef<ModuleOp> module;
  SmallVector<Value> results;
};

Parsed parse(MLIRContext &context, StringRef body) {
  context.loadDialect<func::FuncDialect, linalg::LinalgDialect, tensor::TensorDialect,
                      arith::ArithDialect>();
  Parsed parsed;
  parsed.module = parseSourceString<ModuleOp>(body, &context);
  if (parsed.module)
    llvm::append_range(parsed.results, (*parsed.module->getOps<func::FuncOp>().begin())
                                           .getBody()
                                           .front()
                                           .getTerminator()
                                           ->getOperands());
  return parsed;
}

// Each of linalg.fill's forms names the scalar it writes; a broadcast of a
// tensor, a generic that computes, and one that yields its init do not.
TEST(OpKinds, FilledScalarReadsNamedAndGenericFills) {
  MLIRContext context;
  Parsed p = parse(context, R"mlir(
    #id = affine_map<(d0) -> (d0)>
    #scalar = affine_map<(d0) -> ()>
    func.func @f(%s: f32, %t: tensor<1xf32>, %x: tensor<4xf32>)
        -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
      %e = tensor.empty() : tensor<4xf32>
      %named = linalg.fill ins(%s : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      %generic = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
          ins(%s : f32) outs(%e : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32
      } -> tensor<4xf32>
      %constant = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
          outs(%e : tensor<4xf32>) {
      ^bb0(%out: f32):
        %c = arith.constant 2.0 : f32
        linalg.yield %c : f32
      } -> tensor<4xf32>
      %broadcast = linalg.generic {indexing_maps = [affine_map<(d0) -> (0)>, #id], iterator_types = ["parallel"]}
          ins(%t : tensor<1xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32
      } -> tensor<4xf32>
      %computes = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
          ins(%s : f32) outs(%e : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        %n = arith.negf %in : f32
        linalg.yield %n : f32
      } -> tensor<4xf32>
      %keeps = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
          outs(%x : tensor<4xf32>) {
      ^bb0(%out: f32):
        linalg.yield %out : f32
      } -> tensor<4xf32>
      return %named, %generic, %constant, %broadcast, %computes, %keeps
          : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    })mlir");
  ASSERT_TRUE(p.module);
  Value s = (*p.module->getOps<func::FuncOp>().begin()).getArgument(0);
  EXPECT_EQ(filledScalar(p.results[0]), s);
  EXPECT_EQ(filledScalar(p.results[1]), s);
  Value constant = filledScalar(p.results[2]);
  ASSERT_TRUE(constant);
  EXPECT_TRUE(constant.getDefiningOp<arith::ConstantOp>());
  EXPECT_FALSE(filledScalar(p.results[3]));
  EXPECT_FALSE(filledScalar(p.results[4]));
  EXPECT_FALSE(filledScalar(p.results[5]));
}

// A chain of a named and a generic transpose leads back to the weight; a
// generic that reads through a broadcast map is no transpose.
TEST(OpKinds, SkipTransposesSeesThroughBothForms) {
  MLIRContext context;
  Parsed p = parse(context, R"mlir(
    #id = affine_map<(d0, d1) -> (d0, d1)>
    #t = affine_map<(d0, d1) -> (d1, d0)>
    func.func @f(%w: tensor<2x3xf32>, %v: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
      %e = tensor.empty() : tensor<3x2xf32>
      %named = linalg.transpose ins(%w : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>)
          permutation = [1, 0]
      %f = tensor.empty() : tensor<2x3xf32>
      %back = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
          ins(%named : tensor<3x2xf32>) outs(%f : tensor<2x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32
      } -> tensor<2x3xf32>
      %rows = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, #id], iterator_types = ["parallel", "parallel"]}
          ins(%v : tensor<3xf32>) outs(%f : tensor<2x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32
      } -> tensor<2x3xf32>
      return %back, %rows : tensor<2x3xf32>, tensor<2x3xf32>
    })mlir");
  ASSERT_TRUE(p.module);
  auto func = *p.module->getOps<func::FuncOp>().begin();
  EXPECT_TRUE(isPermutationCopy(p.results[0].getDefiningOp()));
  EXPECT_EQ(skipTransposes(p.results[0]), func.getArgument(0));
  EXPECT_FALSE(isPermutationCopy(p.results[1].getDefiningOp()));
  EXPECT_EQ(skipTransposes(p.results[1]), p.results[1]);
}

// The loop ranges read off the maps are upstream's, for named ops, a strided
// convolution (its output loops are compound in the input's map) and a
// generic whose first map indexes a dim by a constant and whose loop d1 is
// first alone in its second operand.
TEST(OpKinds, StaticLoopRangesMatchUpstream) {
  MLIRContext context;
  Parsed p = parse(context, R"mlir(
    func.func @f(%a: tensor<4x5xf32>, %b: tensor<5x6xf32>, %x: tensor<2x3x9x11xf32>,
                 %k: tensor<7x3x3x2xf32>, %s: f32, %v: tensor<6xf32>, %c: tensor<8x4x5xf32>,
                 %d: tensor<8x5x6xf32>)
        -> (tensor<4x6xf32>, tensor<2x7x4x5xf32>, tensor<4x5xf32>, tensor<5x4xf32>,
            tensor<4x6xf32>, tensor<5x4xf32>, tensor<8x4x6xf32>) {
      %e = tensor.empty() : tensor<4x6xf32>
      %mm = linalg.matmul ins(%a, %b : tensor<4x5xf32>, tensor<5x6xf32>)
          outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
      %ce = tensor.empty() : tensor<2x7x4x5xf32>
      %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
          ins(%x, %k : tensor<2x3x9x11xf32>, tensor<7x3x3x2xf32>)
          outs(%ce : tensor<2x7x4x5xf32>) -> tensor<2x7x4x5xf32>
      %fe = tensor.empty() : tensor<4x5xf32>
      %fill = linalg.fill ins(%s : f32) outs(%fe : tensor<4x5xf32>) -> tensor<4x5xf32>
      %te = tensor.empty() : tensor<5x4xf32>
      %t = linalg.transpose ins(%a : tensor<4x5xf32>) outs(%te : tensor<5x4xf32>) permutation = [1, 0]
      %bc = linalg.broadcast ins(%v : tensor<6xf32>) outs(%e : tensor<4x6xf32>) dimensions = [0]
      %ge = tensor.empty() : tensor<5x4xf32>
      %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>,
                                            affine_map<(d0, d1) -> (d1, d0)>,
                                            affine_map<(d0, d1) -> (d0, d1)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%b, %a : tensor<5x6xf32>, tensor<4x5xf32>) outs(%ge : tensor<5x4xf32>) {
      ^bb0(%i: f32, %j: f32, %o: f32):
        %r = arith.addf %i, %j : f32
        linalg.yield %r : f32
      } -> tensor<5x4xf32>
      %be = tensor.empty() : tensor<8x4x6xf32>
      %bmm = linalg.batch_matmul ins(%c, %d : tensor<8x4x5xf32>, tensor<8x5x6xf32>)
          outs(%be : tensor<8x4x6xf32>) -> tensor<8x4x6xf32>
      return %mm, %conv, %fill, %t, %bc, %g, %bmm
          : tensor<4x6xf32>, tensor<2x7x4x5xf32>, tensor<4x5xf32>, tensor<5x4xf32>,
            tensor<4x6xf32>, tensor<5x4xf32>, tensor<8x4x6xf32>
    })mlir");
  ASSERT_TRUE(p.module);
  ASSERT_EQ(p.results.size(), 7u);
  for (Value result : p.results) {
    auto op = llvm::cast<linalg::LinalgOp>(result.getDefiningOp());
    SCOPED_TRACE(op->getName().getStringRef().str());
    EXPECT_EQ(staticLoopRanges(op), op.getStaticLoopRanges());
  }
  // Without a map per operand (an op the verifier refuses) every loop
  // stays dynamic.
  auto matmul = llvm::cast<linalg::LinalgOp>(p.results[0].getDefiningOp());
  SmallVector<AffineMap> maps = matmul.getIndexingMapsArray();
  EXPECT_EQ(staticLoopRanges(matmul, ArrayRef<AffineMap>(maps).drop_back()),
            SmallVector<int64_t>(3, ShapedType::kDynamic));
  // The generic's d0 is its first input's dim 0; d1 is first alone in its
  // second input, at dim 0.
  auto generic = llvm::cast<linalg::LinalgOp>(p.results[5].getDefiningOp());
  EXPECT_EQ(staticLoopRanges(generic), (SmallVector<int64_t>{5, 4}));
}

} // namespace
