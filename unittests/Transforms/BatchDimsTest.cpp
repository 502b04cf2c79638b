//===- BatchDimsTest.cpp - which tensor dim scales with the batch ---------===//

#include "wsc/Analysis/BatchDims.h"
#include "wsc/Dialect/WSC/WSCDialect.h"

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

// The insert's result learns its batch dim only from its consumer, after
// the insert was visited once. One more visit must carry it through the
// source to the destination as well: the solver visits an op again only
// when a fact reaches it from elsewhere, so the insert's own visit has to
// go both ways.
TEST(BatchDims, InsertSliceTakesABackwardFactToSourceAndDestination) {
  MLIRContext context;
  context.loadDialect<WSCDialect, func::FuncDialect, linalg::LinalgDialect,
                      tensor::TensorDialect, arith::ArithDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    func.func @f(%x: tensor<4x10xf32> {wsc.input = 0 : i64}) -> tensor<4x10xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4x8xf32>
      %src = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
      %dest = tensor.empty() : tensor<4x10xf32>
      %r = tensor.insert_slice %src into %dest[0, 1] [4, 8] [1, 1]
          : tensor<4x8xf32> into tensor<4x10xf32>
      %o = tensor.empty() : tensor<4x10xf32>
      %sum = linalg.add ins(%r, %x : tensor<4x10xf32>, tensor<4x10xf32>)
                        outs(%o : tensor<4x10xf32>) -> tensor<4x10xf32>
      return %sum : tensor<4x10xf32>
    })mlir",
                                                             &context);
  ASSERT_TRUE(module);
  auto func = *module->getOps<func::FuncOp>().begin();
  FailureOr<BatchDims> dims = BatchDims::compute(func);
  ASSERT_TRUE(succeeded(dims));
  auto insert = *func.getOps<tensor::InsertSliceOp>().begin();
  EXPECT_EQ(dims->lookup(insert.getResult()), std::optional<int64_t>(0));
  EXPECT_EQ(dims->lookup(insert.getSource()), std::optional<int64_t>(0));
  EXPECT_EQ(dims->lookup(insert.getDest()), std::optional<int64_t>(0));
  // The fill that makes the source gets it too, through its init.
  auto fill = *func.getOps<linalg::FillOp>().begin();
  EXPECT_EQ(dims->lookup(fill.getOutputs()[0]), std::optional<int64_t>(0));
}

} // namespace
