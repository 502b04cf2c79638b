//===- DescribeKernelTest.cpp - kernels as the layout cost model sees them ===//

#include "wsc/Dialect/WSC/WSCDialect.h"
#include "wsc/Analysis/DescribeKernel.h"
#include "wsc/Analysis/KernelCost.h"
#include "wsc/Analysis/KernelDescriptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::wsc;
namespace model = ::wsc::model;

namespace {

class DescribeKernelTest : public ::testing::Test {
protected:
  DescribeKernelTest() {
    context.loadDialect<WSCDialect, func::FuncDialect, linalg::LinalgDialect,
                        tensor::TensorDialect, arith::ArithDialect>();
  }

  /// The only kernel of `source`, with its function's batch dims in `dims`.
  KernelOp parseKernel(StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    if (!module)
      return {};
    auto func = *module->getOps<func::FuncOp>().begin();
    FailureOr<BatchDims> computed = BatchDims::compute(func);
    EXPECT_TRUE(succeeded(computed));
    dims = succeeded(computed) ? std::move(*computed) : BatchDims();
    return *func.getOps<KernelOp>().begin();
  }

  /// The description of the only kernel of `source`.
  KernelDescription describe(StringRef source, int64_t localBatch = 0) {
    KernelOp kernel = parseKernel(source);
    DescribeOptions options;
    options.localBatch = localBatch;
    std::string whyNot;
    FailureOr<KernelDescription> described = describeKernel(kernel, dims, options, whyNot);
    EXPECT_TRUE(succeeded(described)) << whyNot;
    return succeeded(described) ? *described : KernelDescription{};
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  BatchDims dims;
};

std::string dimsText(const model::KernelDesc &k) {
  std::string text;
  for (const model::IterDim &d : k.dims)
    text += d.name + ":" + std::to_string(d.size) + (d.reduced ? "r " : " ");
  return text;
}

/// The exporter's linear: tokens flattened for a linalg.matmul against the
/// transposed weight, the result expanded back.
const char *kLinear = R"mlir(
func.func @f(%x: tensor<8x64x32xf32> {wsc.input = 0 : i64},
             %w: tensor<16x32xf32> {wsc.param = "fc.weight"}) -> tensor<512x16xf32> {
  %y = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%x, %w)
      : (tensor<8x64x32xf32>, tensor<16x32xf32>) -> tensor<512x16xf32> {
  ^bb0(%a: tensor<8x64x32xf32>, %k: tensor<16x32xf32>):
    %zero = arith.constant 0.0 : f32
    %tokens = tensor.collapse_shape %a [[0, 1], [2]] : tensor<8x64x32xf32> into tensor<512x32xf32>
    %te = tensor.empty() : tensor<32x16xf32>
    %t = linalg.transpose ins(%k : tensor<16x32xf32>) outs(%te : tensor<32x16xf32>) permutation = [1, 0]
    %e = tensor.empty() : tensor<512x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<512x16xf32>) -> tensor<512x16xf32>
    %r = linalg.matmul ins(%tokens, %t : tensor<512x32xf32>, tensor<32x16xf32>)
                       outs(%f : tensor<512x16xf32>) -> tensor<512x16xf32>
    wsc.yield %r : tensor<512x16xf32>
  }
  return %y : tensor<512x16xf32>
}
)mlir";

TEST_F(DescribeKernelTest, LinearFollowsDimsThroughReshapesAndTransposes) {
  KernelDescription d = describe(kLinear, /*localBatch=*/2);
  // The matmul's token loop flattens batch and sequence; the batch shrinks
  // to one system's shard.
  EXPECT_EQ(dimsText(d.desc), "b:2 s:64 h1:16 h0:32r ");
  EXPECT_EQ(d.desc.kind, model::KernelKind::Linear);
  EXPECT_EQ(d.desc.dim("b")->role, model::DimRole::Batch);
  EXPECT_EQ(d.desc.dim("s")->role, model::DimRole::Sequence);
  EXPECT_EQ(d.desc.scatter, (std::vector<std::pair<std::string, std::string>>{{"h1", "h0"}}));
  ASSERT_EQ(d.desc.operands.size(), 2u);
  EXPECT_EQ(d.desc.operands[0].dims, (std::vector<std::string>{"b", "s", "h0"}));
  EXPECT_FALSE(d.desc.operands[0].streamed);
  EXPECT_EQ(d.desc.operands[0].elementBytes, 4);
  // The weight streams in at the stream dtype, named by its own order.
  EXPECT_EQ(d.desc.operands[1].dims, (std::vector<std::string>{"h1", "h0"}));
  EXPECT_TRUE(d.desc.operands[1].streamed);
  EXPECT_EQ(d.desc.operands[1].elementBytes, 2);
  // The result is [tokens, h1]: its first dim flattens two iteration dims.
  ASSERT_EQ(d.results.size(), 1u);
  EXPECT_EQ(d.results[0].dims.size(), 2u);
  EXPECT_EQ(d.results[0].dims[0], (SmallVector<std::string, 2>{"b", "s"}));
  EXPECT_EQ(d.desc.results[0].dims, (std::vector<std::string>{"b", "s", "h1"}));
}

TEST_F(DescribeKernelTest, ChoosesOverTheDescription) {
  KernelDescription d = describe(kLinear);
  model::LayoutContext context;
  context.target.gridX = 8;
  context.target.gridY = 4;
  model::LayoutPlan plan = model::chooseLayout(d.desc, context);
  ASSERT_TRUE(plan.feasible) << plan.error;
  EXPECT_EQ(plan.kernels[0].kernel, "fc.fwd");
}

TEST_F(DescribeKernelTest, BackwardLinearNamesTheWeightInItsOwnOrder) {
  // dx = dy . w contracts H1 (the weight's dim 0): its result lands where
  // H1 was; the weight gradient's input x is over the same dims.
  KernelDescription d = describe(R"mlir(
#tok_h1 = affine_map<(b, h0, h1) -> (b, h1)>
#w = affine_map<(b, h0, h1) -> (h1, h0)>
#tok_h0 = affine_map<(b, h0, h1) -> (b, h0)>
func.func @f(%x: tensor<8x32xf32> {wsc.input = 0 : i64}, %dy: tensor<8x16xf32>,
             %w: tensor<16x32xf32> {wsc.param = "fc.weight"})
    -> (tensor<8x32xf32>, tensor<16x32xf32> {wsc.grad = "fc.weight"}) {
  %dx, %dw = wsc.kernel "fc.bwd" layer("fc") phase(<backward>) (%x, %dy, %w)
      : (tensor<8x32xf32>, tensor<8x16xf32>, tensor<16x32xf32>) -> (tensor<8x32xf32>, tensor<16x32xf32>) {
  ^bb0(%a: tensor<8x32xf32>, %g: tensor<8x16xf32>, %k: tensor<16x32xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x32xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
    %gx = linalg.generic {indexing_maps = [#tok_h1, #w, #tok_h0], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%g, %k : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f : tensor<8x32xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %m = arith.mulf %i, %j : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<8x32xf32>
    %te = tensor.empty() : tensor<16x8xf32>
    %gt = linalg.transpose ins(%g : tensor<8x16xf32>) outs(%te : tensor<16x8xf32>) permutation = [1, 0]
    %we = tensor.empty() : tensor<16x32xf32>
    %wf = linalg.fill ins(%zero : f32) outs(%we : tensor<16x32xf32>) -> tensor<16x32xf32>
    %gw = linalg.matmul ins(%gt, %a : tensor<16x8xf32>, tensor<8x32xf32>) outs(%wf : tensor<16x32xf32>) -> tensor<16x32xf32>
    wsc.yield %gx, %gw : tensor<8x32xf32>, tensor<16x32xf32>
  }
  return %dx, %dw : tensor<8x32xf32>, tensor<16x32xf32>
}
)mlir");
  EXPECT_EQ(dimsText(d.desc), "b:8 h0:32 h1:16r ");
  EXPECT_EQ(d.desc.scatter, (std::vector<std::pair<std::string, std::string>>{{"h0", "h1"}}));
  // dy, the main op's activation, comes first; then x and the weight.
  ASSERT_EQ(d.desc.operands.size(), 3u);
  EXPECT_EQ(d.desc.operands[0].dims, (std::vector<std::string>{"b", "h1"}));
  EXPECT_EQ(d.inputs[1].use, 0);
  EXPECT_EQ(d.desc.operands[1].dims, (std::vector<std::string>{"b", "h0"}));
  EXPECT_EQ(d.desc.operands[2].dims, (std::vector<std::string>{"h1", "h0"}));
  EXPECT_TRUE(d.desc.operands[2].streamed);
  // The gradient leaves at the gradient dtype.
  ASSERT_EQ(d.desc.results.size(), 2u);
  EXPECT_TRUE(d.desc.results[1].streamed);
  EXPECT_EQ(d.desc.results[1].elementBytes, 4);
}

TEST_F(DescribeKernelTest, WeightGradientLetsOutputFeaturesTakeInputFeaturesPlaces) {
  // A kernel whose main op is a weight gradient spreads x's H0 over x and
  // reads dy row by row: a tensor over H1 but not H0 may take H0's places.
  KernelDescription d = describe(R"mlir(
func.func @f(%x: tensor<8x32xf32> {wsc.input = 0 : i64}, %dy: tensor<8x16xf32>)
    -> (tensor<16x32xf32> {wsc.grad = "fc.weight"}) {
  %dw = wsc.kernel "fc.wgrad" layer("fc") phase(<backward>) (%x, %dy)
      : (tensor<8x32xf32>, tensor<8x16xf32>) -> tensor<16x32xf32> {
  ^bb0(%a: tensor<8x32xf32>, %g: tensor<8x16xf32>):
    %zero = arith.constant 0.0 : f32
    %te = tensor.empty() : tensor<16x8xf32>
    %gt = linalg.transpose ins(%g : tensor<8x16xf32>) outs(%te : tensor<16x8xf32>) permutation = [1, 0]
    %we = tensor.empty() : tensor<16x32xf32>
    %wf = linalg.fill ins(%zero : f32) outs(%we : tensor<16x32xf32>) -> tensor<16x32xf32>
    %gw = linalg.matmul ins(%gt, %a : tensor<16x8xf32>, tensor<8x32xf32>) outs(%wf : tensor<16x32xf32>) -> tensor<16x32xf32>
    wsc.yield %gw : tensor<16x32xf32>
  }
  return %dw : tensor<16x32xf32>
}
)mlir");
  ASSERT_EQ(d.desc.scatter.size(), 1u);
  const model::IterDim *outputs = d.desc.dim(d.desc.scatter[0].first);
  const model::IterDim *inputs = d.desc.dim(d.desc.scatter[0].second);
  ASSERT_TRUE(outputs && inputs);
  EXPECT_EQ(outputs->size, 16);
  EXPECT_EQ(inputs->size, 32);
}

TEST_F(DescribeKernelTest, ConvolutionHasSpatialDimsWithHalos) {
  KernelDescription d = describe(R"mlir(
func.func @f(%x: tensor<2x3x8x8xf32> {wsc.input = 0 : i64},
             %w: tensor<4x3x3x3xf32> {wsc.param = "conv.weight"}) -> tensor<2x4x8x8xf32> {
  %y = wsc.kernel "conv.fwd" layer("conv") phase(<forward>) (%x, %w)
      : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> {
  ^bb0(%a: tensor<2x3x8x8xf32>, %k: tensor<4x3x3x3xf32>):
    %zero = arith.constant 0.0 : f32
    %pe = tensor.empty() : tensor<2x3x10x10xf32>
    %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<2x3x10x10xf32>) -> tensor<2x3x10x10xf32>
    %p = tensor.insert_slice %a into %pf[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1]
        : tensor<2x3x8x8xf32> into tensor<2x3x10x10xf32>
    %e = tensor.empty() : tensor<2x4x8x8xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
        ins(%p, %k : tensor<2x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    wsc.yield %c : tensor<2x4x8x8xf32>
  }
  return %y : tensor<2x4x8x8xf32>
}
)mlir");
  EXPECT_EQ(d.desc.kind, model::KernelKind::Conv2d);
  EXPECT_EQ(dimsText(d.desc), "n:2 co:4 h:8 w:8 ci:3r kh:3r kw:3r ");
  EXPECT_EQ(d.desc.dim("h")->halo, 2);
  EXPECT_EQ(d.desc.dim("kh")->role, model::DimRole::Window);
  EXPECT_EQ(d.desc.scatter, (std::vector<std::pair<std::string, std::string>>{{"co", "ci"}}));
  // The unpadded input, through the padding copy.
  EXPECT_EQ(d.desc.operands[0].dims, (std::vector<std::string>{"n", "ci", "h", "w"}));
}

/// A kernel that only passes its input on: nothing for the cost model.
const char *kCopyOnly = R"mlir(
func.func @f(%x: tensor<8x4xf32> {wsc.input = 0 : i64}) -> tensor<8x4xf32> {
  %y = wsc.kernel "copy" layer("copy") phase(<forward>) (%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    wsc.yield %a : tensor<8x4xf32>
  }
  return %y : tensor<8x4xf32>
}
)mlir";

TEST_F(DescribeKernelTest, FailsWithoutAStructuredOp) {
  KernelOp kernel = parseKernel(kCopyOnly);
  ASSERT_TRUE(kernel);
  std::string whyNot;
  EXPECT_TRUE(failed(describeKernel(kernel, dims, {}, whyNot)));
  EXPECT_EQ(whyNot, "no structured op over static tensors in its body");
}

/// Everything a description holds that the local batch could change.
std::string descriptionText(const KernelDescription &d) {
  std::string text = d.desc.name + " " + dimsText(d.desc);
  for (const model::TensorUse &use : d.desc.operands)
    text += "| in " + llvm::join(use.dims, ",") + " " + std::to_string(use.elementBytes) +
            (use.streamed ? "s" : "");
  for (const model::TensorUse &use : d.desc.results)
    text += "| out " + llvm::join(use.dims, ",") + " " + std::to_string(use.elementBytes) +
            (use.streamed ? "s" : "");
  for (const DescribedTensor &t : d.inputs)
    text += "| use " + std::to_string(t.use) + (t.streamed ? "s" : "");
  return text;
}

TEST_F(DescribeKernelTest, KeptDescriptionsRescaleToEachSizeAsDescribingAgainWould) {
  KernelOp kernel = parseKernel(kLinear);
  ASSERT_TRUE(kernel);
  KernelDescriptions kept;
  EXPECT_EQ(kept.lookup(kernel), nullptr);
  // Larger, smaller, uneven and back: each as a fresh description says.
  for (int64_t size : {8, 3, 5, 1, 8}) {
    DescribeOptions options;
    options.localBatch = size;
    std::string keptWhy, freshWhy;
    FailureOr<KernelDescription> fromKept = kept.describe(kernel, dims, options, keptWhy);
    FailureOr<KernelDescription> fresh = describeKernel(kernel, dims, options, freshWhy);
    ASSERT_TRUE(succeeded(fromKept) && succeeded(fresh)) << size;
    EXPECT_EQ(descriptionText(*fromKept), descriptionText(*fresh)) << size;
    EXPECT_EQ(fromKept->desc.dim("b")->size, size);
    ASSERT_NE(kept.lookup(kernel), nullptr);
  }
  // Other stream widths are described again, not rescaled.
  DescribeOptions wide;
  wide.localBatch = 2;
  wide.weightBytes = 4;
  std::string why;
  FailureOr<KernelDescription> widened = kept.describe(kernel, dims, wide, why);
  ASSERT_TRUE(succeeded(widened));
  EXPECT_EQ(descriptionText(*widened),
            descriptionText(*describeKernel(kernel, dims, wide, why)));
}

TEST_F(DescribeKernelTest, KeptDescriptionsKeepWhyAKernelIsNotDescribed) {
  KernelOp kernel = parseKernel(kCopyOnly);
  ASSERT_TRUE(kernel);
  KernelDescriptions kept;
  for (int64_t size : {4, 2}) {
    DescribeOptions options;
    options.localBatch = size;
    std::string whyNot;
    EXPECT_TRUE(failed(kept.describe(kernel, dims, options, whyNot)));
    EXPECT_EQ(whyNot, "no structured op over static tensors in its body");
  }
  EXPECT_EQ(kept.lookup(kernel), nullptr);
}

TEST_F(DescribeKernelTest, PreparedDescriptionsAreTheOnesDescribeWouldMake) {
  for (const char *source : {kLinear, kCopyOnly}) {
    KernelOp kernel = parseKernel(source);
    ASSERT_TRUE(kernel);
    KernelDescriptions kept;
    DescribeOptions options;
    options.localBatch = 4;
    kept.prepare({kernel}, dims, options);
    std::string freshWhy;
    FailureOr<KernelDescription> fresh = describeKernel(kernel, dims, options, freshWhy);
    EXPECT_EQ(kept.lookup(kernel) != nullptr, succeeded(fresh));
    // Then at another size, rescaled from the prepared one.
    for (int64_t size : {4, 2}) {
      options.localBatch = size;
      std::string keptWhy;
      freshWhy.clear();
      FailureOr<KernelDescription> fromKept = kept.describe(kernel, dims, options, keptWhy);
      fresh = describeKernel(kernel, dims, options, freshWhy);
      ASSERT_EQ(succeeded(fromKept), succeeded(fresh)) << size;
      EXPECT_EQ(keptWhy, freshWhy);
      if (succeeded(fresh))
        EXPECT_EQ(descriptionText(*fromKept), descriptionText(*fresh)) << size;
    }
  }
}

//===----------------------------------------------------------------------===//
// Back to the tensor's own dims
//===----------------------------------------------------------------------===//

DescribedTensor flattened(std::vector<std::vector<std::string>> dims) {
  DescribedTensor tensor;
  tensor.use = 0;
  for (const auto &flat : dims)
    tensor.dims.emplace_back(flat.begin(), flat.end());
  return tensor;
}

std::string own(const char *layout, const DescribedTensor &tensor) {
  std::map<std::string, int64_t> sizes{{"b", 8}, {"s", 64}, {"h", 32}};
  std::optional<model::Layout> result =
      tensorDimsLayout(*model::parseLayout(layout), tensor, sizes);
  return result ? result->str() : "none";
}

TEST(TensorDimsLayout, FlattenedDimTakesThePlaceOfItsPieces) {
  DescribedTensor tokens = flattened({{"b", "s"}, {"h"}});
  struct Case {
    const char *why, *layout, *own;
  };
  const Case cases[] = {
      {"Figure 15: batch x seq over y is the flattened tokens over y",
       "dims=[b,s,h] x=[h] y=[b,s] pes=8x4", "dims=[b_s,h] x=[h] y=[b_s] pes=8x4 tiling=exact"},
      {"Figure 16: the batch's outer factor on x, the rest on y",
       "dims=[b,s,h] split=[b:2] x=[b.0,h] y=[b.1,s] pes=8x4",
       "dims=[b_s,h] split=[b_s:2] x=[b_s.0,h] y=[b_s.1] pes=8x4 tiling=exact"},
      {"the whole batch on x, the sequence on y", "dims=[b,s,h] x=[b,h] y=[s] pes=8x4",
       "dims=[b_s,h] split=[b_s:8] x=[b_s.0,h] y=[b_s.1] pes=8x4 tiling=exact"},
      {"samples over y, each one's tokens whole on its PE", "dims=[b,s,h] x=[h] y=[b] pes=8x4",
       "dims=[b_s,h] split=[b_s:8] x=[h] y=[b_s.0] pes=8x4 tiling=exact"},
      {"tokens whole everywhere", "dims=[b,s,h] x=[h] y=[] pes=8x4",
       "dims=[b_s,h] x=[h] y=[] pes=8x4 tiling=exact"},
      {"the sequence before the batch on one axis: the minor factor first",
       "dims=[b,s,h] x=[h] y=[s,b] pes=8x4",
       "dims=[b_s,h] split=[b_s:8] x=[h] y=[b_s.1,b_s.0] pes=8x4 tiling=exact"},
      {"batch factors on both axes and the sequence back on x: no one cut does",
       "dims=[b,s,h] split=[b:2] x=[b.0,s] y=[b.1,h] pes=8x4", "none"},
  };
  for (const Case &c : cases)
    EXPECT_EQ(own(c.layout, tokens), c.own) << c.why;
}

TEST(TensorDimsLayout, UnitDimsAreNamedByPosition) {
  EXPECT_EQ(own("dims=[b,u1] x=[] y=[b] pes=8x4", flattened({{"b"}, {}})),
            "dims=[b,u1] x=[] y=[b] pes=8x4 tiling=exact");
}

//===----------------------------------------------------------------------===//
// The attribute and the cost model's layout
//===----------------------------------------------------------------------===//

TEST_F(DescribeKernelTest, LayoutAttrConvertsBothWays) {
  model::Layout layout =
      *model::parseLayout("dims=[b,s,h] split=[b:4] x=[b.0,h] y=[b.1,s] tiling=pad");
  LayoutAttr attr = LayoutAttr::get(&context, layout);
  EXPECT_EQ(attr.getTiling(), LayoutTiling::Pad);
  ASSERT_EQ(attr.getSplit().size(), 1u);
  EXPECT_EQ(llvm::cast<StringAttr>(attr.getSplit()[0]).getValue(), "b:4");
  model::Layout back = attr.toModel(924, 920);
  layout.pesX = 924;
  layout.pesY = 920;
  EXPECT_EQ(back, layout);
  // Defaults: no split, exact.
  Builder b(&context);
  LayoutAttr plain = LayoutAttr::get(&context, b.getStrArrayAttr({"b", "h"}),
                                     b.getStrArrayAttr({"h"}), b.getStrArrayAttr({"b"}));
  EXPECT_EQ(plain.toModel(8, 4).str(), "dims=[b,h] x=[h] y=[b] pes=8x4 tiling=exact");
}

TEST_F(DescribeKernelTest, KernelTilesComeFromTheLayoutAlgebra) {
  Builder b(&context);
  model::TargetSpec target;
  target.gridX = 8;
  target.gridY = 4;
  // 16 tokens x 32 features, Figure 15: 4 features x 4 tokens per PE.
  LayoutAttr fig15 = LayoutAttr::get(&context, b.getStrArrayAttr({"b", "h"}),
                                     b.getStrArrayAttr({"h"}), b.getStrArrayAttr({"b"}));
  model::Tile tile = tileOf({16, 32}, fig15, target);
  EXPECT_EQ(tile.pesX, 8);
  EXPECT_EQ(tile.pesY, 4);
  EXPECT_EQ(tile.elementsPerPe, 16);
  // A weight [6, 16] with H0 over x is copied down the rows: the copies
  // share no work, so one row of PEs counts.
  LayoutAttr weight = LayoutAttr::get(&context, b.getStrArrayAttr({"h1", "h0"}),
                                      b.getStrArrayAttr({"h0"}), b.getStrArrayAttr({}));
  tile = tileOf({6, 16}, weight, target);
  EXPECT_EQ(tile.pesY, 1);
  EXPECT_EQ(tile.elementsPerPe, 6 * 2);
  // Two dims on one axis share it major first: 2 x 8 tokens over 4 rows.
  LayoutAttr tokens = LayoutAttr::get(&context, b.getStrArrayAttr({"b", "s", "h"}),
                                      b.getStrArrayAttr({"h"}), b.getStrArrayAttr({"b", "s"}));
  tile = tileOf({2, 8, 8}, tokens, target);
  EXPECT_EQ(tile.pesY, 4);
  EXPECT_EQ(tile.elementsPerPe, 4 * 1);
}

} // namespace
