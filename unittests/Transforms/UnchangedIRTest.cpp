//===- UnchangedIRTest.cpp - passes that change nothing say so -----------===//
//
// A pass that leaves the IR as it was marks every analysis preserved, and
// the pass manager then skips the verifier after it. So does one that only
// sets module attributes no verifier or analysis reads (the wsc dialect's
// description names them). One that changes anything else must not: an
// analysis cached before it would be stale, and the change would go
// unverified. An analysis cached before the pass under test, and looked up
// after it, tells which the pass said.
//
//===----------------------------------------------------------------------===//

#include "wsc/Dialect/WSC/WSCDialect.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <gtest/gtest.h>

using namespace mlir;
using mlir::wsc::MicroBatchMode;

namespace {

/// Any analysis: it is kept only while every pass preserves all.
struct Probe {
  explicit Probe(Operation *) {}
};

struct CacheProbe : PassWrapper<CacheProbe, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CacheProbe)
  void runOnOperation() override {
    (void)getAnalysis<Probe>();
    markAllAnalysesPreserved();
  }
};

struct LookUpProbe : PassWrapper<LookUpProbe, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LookUpProbe)
  explicit LookUpProbe(bool &kept) : kept(kept) {}
  void runOnOperation() override {
    kept = getCachedAnalysis<Probe>().has_value();
    markAllAnalysesPreserved();
  }
  bool &kept;
};

class UnchangedIRTest : public ::testing::Test {
protected:
  UnchangedIRTest() {
    // The passes a test runs first are named in a textual pipeline.
    static const bool registered = (mlir::wsc::registerWSCPasses(), true);
    (void)registered;
    context.loadDialect<mlir::wsc::WSCDialect, func::FuncDialect, linalg::LinalgDialect,
                        tensor::TensorDialect, arith::ArithDialect, cf::ControlFlowDialect>();
  }

  /// Runs the passes of `before` (a textual pipeline), then `pass`, on
  /// `source`; whether `pass` said it changed nothing.
  bool keptAnalyses(StringRef source, std::unique_ptr<Pass> pass, StringRef before = "") {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    bool kept = false;
    PassManager pm(&context);
    EXPECT_TRUE(succeeded(parsePassPipeline(before, pm)));
    pm.addPass(std::make_unique<CacheProbe>());
    pm.addPass(std::move(pass));
    pm.addPass(std::make_unique<LookUpProbe>(kept));
    EXPECT_TRUE(succeeded(pm.run(*module)));
    return kept;
  }

  MLIRContext context;
};

const char *kLegal = R"mlir(
func.func @f(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  return %x : tensor<4x2xf32>
}
)mlir";

const char *kPadded = R"mlir(
func.func @f(%x: tensor<4x2xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x2xf32> to tensor<4x4xf32>
  return %p : tensor<4x4xf32>
}
)mlir";

TEST_F(UnchangedIRTest, LegalizeSaysWhetherItRewroteAnything) {
  EXPECT_TRUE(keptAnalyses(kLegal, mlir::wsc::createWSCLegalize()));
  EXPECT_FALSE(keptAnalyses(kPadded, mlir::wsc::createWSCLegalize()));
}

/// Each sample scaled by itself: nothing sums over the batch.
const char *kPerSample = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @f(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
  %o = tensor.empty() : tensor<4x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%o : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %in : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
}
)mlir";

/// Centring by the batch mean, which needs the other system's samples.
const char *kBatchMean = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
module attributes {wsc.target = #wsc.target<systems = 2>} {
func.func @f(%x: tensor<4x2xf32> {wsc.input = 0 : i64}) -> (tensor<4x2xf32> {wsc.output = 0 : i64}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x2xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %o = tensor.empty() : tensor<4x2xf32>
  %c = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<4x2xf32>, tensor<2xf32>) outs(%o : tensor<4x2xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %r = arith.subf %in, %s : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}
}
)mlir";

TEST_F(UnchangedIRTest, SyncBatchStatisticsSaysWhetherItInsertedAnAllReduce) {
  EXPECT_TRUE(keptAnalyses(kPerSample, mlir::wsc::createWSCSyncBatchStatistics()));
  EXPECT_FALSE(keptAnalyses(kBatchMean, mlir::wsc::createWSCSyncBatchStatistics()));
}

/// Kernels formed and weight streaming chosen, as wsc-micro-batch expects.
const char *kWeightStreaming = "wsc-form-kernels,wsc-select-mode{mode=weight_streaming}";

std::unique_ptr<Pass> microBatch(MicroBatchMode mode) {
  mlir::wsc::WSCMicroBatchOptions options;
  options.microBatch.mode = mode;
  return mlir::wsc::createWSCMicroBatch(options);
}

// The target, the mode and the micro-batch are module attributes that only
// passes read: setting them leaves the step as the verifier saw it.
TEST_F(UnchangedIRTest, PassesThatOnlySetModuleAttributesKeepAnalyses) {
  EXPECT_TRUE(keptAnalyses(kPerSample, mlir::wsc::createWSCAttachTarget()));
  EXPECT_TRUE(keptAnalyses(kPerSample, mlir::wsc::createWSCSelectMode(), "wsc-form-kernels"));
  // Each candidate size's layouts are written into the step and taken back.
  EXPECT_TRUE(keptAnalyses(kPerSample, microBatch(MicroBatchMode::Auto), kWeightStreaming));
}

// On one system without a split, wsc-micro-batch drops the all-reduces
// wsc-sync-batch-statistics inserted for micro-batches: the step changed.
TEST_F(UnchangedIRTest, MicroBatchSaysWhenItDroppedAllReduces) {
  std::string oneSystem = kBatchMean;
  oneSystem.replace(oneSystem.find("systems = 2"), 11, "systems = 1");
  EXPECT_FALSE(keptAnalyses(oneSystem, microBatch(MicroBatchMode::Auto),
                            std::string("wsc-sync-batch-statistics{micro-batches=true},") +
                                kWeightStreaming));
}

} // namespace
