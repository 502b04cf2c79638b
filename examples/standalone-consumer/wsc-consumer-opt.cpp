//===- wsc-consumer-opt.cpp - an mlir-opt built against installed wsc -----===//
//
// The smallest driver of the wsc passes outside this tree: only the dialects
// a PyTorch-exported training step uses are registered (not all of MLIR's,
// as in wsc-opt), so that this one file builds fast.
//
//===----------------------------------------------------------------------===//

#include "wsc/Dialect/WSC/WSCDialect.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::wsc::registerPipelines();
  mlir::DialectRegistry registry;
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::tensor::TensorDialect, mlir::wsc::WSCDialect>();
  // The pipeline inlines private helpers first.
  mlir::func::registerInlinerExtension(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "wsc passes, built against an installed wsc\n", registry));
}
