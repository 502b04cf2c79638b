//===- LayoutTest.cpp - the layout algebra --------------------------------===//

#include "wsc/Model/CostModel.h"
#include "wsc/Model/Layout.h"

#include <gtest/gtest.h>

using namespace wsc::model;

namespace {

Layout parsed(const std::string &text) {
  std::string error;
  std::optional<Layout> layout = parseLayout(text, &error);
  EXPECT_TRUE(layout) << text << ": " << error;
  return layout.value_or(Layout{});
}

std::string parseError(const std::string &text) {
  std::string error;
  EXPECT_FALSE(parseLayout(text, &error)) << text;
  return error;
}

std::vector<std::string> errorsOf(const std::string &text, const std::vector<int64_t> &shape,
                                  int64_t sram = 0) {
  return verify(parsed(text), shape, 2, sram);
}

using Errors = std::vector<std::string>;

//===----------------------------------------------------------------------===//
// Tile algebra
//===----------------------------------------------------------------------===//

TEST(TileAlgebra, Figure15FeaturesOverXTokensOverY) {
  // [b=2, s=8, h=16] on 8x4: h/8 = 2 features; b takes 2 rows, s the 2 rows
  // left per sample: 8/2 = 4 tokens of one sequence per PE.
  Layout l = parsed("dims=[b,s,h] x=[h] y=[b,s] pes=8x4 tiling=exact");
  TileInfo t = tileOf(l, {2, 8, 16}, 2);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 4, 2}));
  EXPECT_EQ(t.elements, 8);
  EXPECT_EQ(t.bytes, 16);
  EXPECT_EQ(t.pesX, 8);
  EXPECT_EQ(t.pesY, 4);
  EXPECT_EQ(t.paddingElements, 0);
  ASSERT_EQ(t.yShares.size(), 2u);
  EXPECT_EQ(t.yShares[0].pes, 2); // b
  EXPECT_EQ(t.yShares[1].pes, 2); // s: the rows left per sample
  EXPECT_EQ(t.yShares[1].tile, 4);
  EXPECT_TRUE(verify(l, {2, 8, 16}, 2, 49152).empty());
}

TEST(TileAlgebra, PadRoundsEveryTileUp) {
  // 9 features over 4 columns: tiles of 3, padded to 12; 10 tokens over 4
  // rows: tiles of 3, padded to 12. Padding: 12*12 - 10*9 = 54.
  TileInfo t = tileOf(parsed("dims=[s,h] x=[h] y=[s] pes=4x4 tiling=pad"), {10, 9}, 4);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(t.bytes, 36);
  EXPECT_EQ(t.pesX, 4);
  EXPECT_EQ(t.pesY, 4);
  EXPECT_EQ(t.paddingElements, 54);
}

TEST(TileAlgebra, UnevenLeavesTheLastPesShort) {
  // Same busiest tile as pad, no padding; 9 features in tiles of 3 need only
  // 3 of the 4 columns.
  TileInfo t = tileOf(parsed("dims=[s,h] x=[h] y=[s] pes=4x4 tiling=uneven"), {10, 9}, 4);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(t.paddingElements, 0);
  EXPECT_EQ(t.pesX, 3);
  EXPECT_EQ(t.pesY, 4);
}

TEST(TileAlgebra, SeveralDimsOnOneAxisShareGreedily) {
  // y=[b,s] on 8 rows with b=3, s=5: b takes 3 rows, 8/3 = 2 rows are left
  // per sample for s: tiles of ceil(5/2) = 3 tokens, 6 rows hold data.
  TileInfo t = tileOf(parsed("dims=[b,s,h] x=[h] y=[b,s] pes=4x8 tiling=uneven"), {3, 5, 16}, 2);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(t.pesY, 6);
  EXPECT_EQ(t.elements, 12);
}

TEST(TileAlgebra, MinorDimGetsWhatTheMajorLeaves) {
  // x=[a,h]: a (16) takes all 8 columns, h is whole on every PE.
  TileInfo t = tileOf(parsed("dims=[a,h] x=[a,h] y=[] pes=8x2 tiling=exact"), {16, 6}, 1);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(t.xShares[1].pes, 1);
}

TEST(TileAlgebra, Figure16SplitsTheBatchOverBothAxes) {
  // b=8 as b.0=2 (x) times b.1=4 (y) on 8x8: x=[b.0,h]: 2 sample groups of
  // 4 columns, 16/4 = 4 features each; y=[b.1,s]: 4 samples of 2 rows,
  // 4/2 = 2 tokens each. 8*4*16 / 64 PEs = 8 elements: exact.
  Layout l = parsed("dims=[b,s,h] split=[b:2] x=[b.0,h] y=[b.1,s] pes=8x8 tiling=exact");
  TileInfo t = tileOf(l, {8, 4, 16}, 2);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(t.elements, 8);
  EXPECT_EQ(t.pes(), 64);
  EXPECT_EQ(t.xShares[0].dim, "b.0");
  EXPECT_EQ(t.xShares[0].size, 2);
  EXPECT_EQ(t.yShares[0].size, 4);
  EXPECT_TRUE(verify(l, {8, 4, 16}, 2, 49152).empty());
}

TEST(TileAlgebra, SplitFactorsOnOneAxisMultiply) {
  // Both factors of b on y (b.0 major): the tile of b is the product.
  Layout l = parsed("dims=[b,h] split=[b:4] x=[h] y=[b.0,b.1] pes=2x8 tiling=exact");
  TileInfo t = tileOf(l, {32, 4}, 4);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{4, 2})); // b.0: 4/4=1, b.1: 8/2=4
}

TEST(TileAlgebra, AnAxisWithoutDimsReplicates) {
  // A weight [H1, H0] with H0 over x: every row of PEs holds all of H1.
  TileInfo t = tileOf(parsed("dims=[h1,h0] x=[h0] y=[] pes=8x4"), {6, 16}, 2);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{6, 2}));
  EXPECT_EQ(t.pesY, 4);
}

//===----------------------------------------------------------------------===//
// Verifier
//===----------------------------------------------------------------------===//

TEST(Verify, DimThatDoesNotDivide) {
  EXPECT_EQ(errorsOf("dims=[b,seq,h] x=[h] y=[seq] pes=4x3", {1, 100, 8}),
            Errors{"dim 'seq' (size 100) does not divide over 3 PEs on y; use tiling=pad or "
                   "tiling=uneven"});
  EXPECT_TRUE(errorsOf("dims=[b,seq,h] x=[h] y=[seq] pes=4x3 tiling=pad", {1, 100, 8}).empty());
  EXPECT_TRUE(
      errorsOf("dims=[b,seq,h] x=[h] y=[seq] pes=4x3 tiling=uneven", {1, 100, 8}).empty());
}

TEST(Verify, DimThatDoesNotFillItsPes) {
  EXPECT_EQ(errorsOf("dims=[b,s,h] x=[h] y=[b,s] pes=4x8", {3, 5, 16}),
            (Errors{"dim 'b' (size 3) does not evenly fill 8 PEs on y; use tiling=pad or "
                    "tiling=uneven",
                    "dim 's' (size 5) does not divide over 2 PEs on y; use tiling=pad or "
                    "tiling=uneven"}));
  EXPECT_EQ(errorsOf("dims=[h] x=[h] y=[] pes=6x1", {3}),
            Errors{"dim 'h' (size 3) does not evenly fill 6 PEs on x; use tiling=pad or "
                   "tiling=uneven"});
}

TEST(Verify, TileOverflowsSram) {
  // [120, 1024] with h over 4 columns: 120 * 256 * 2 = 61440 bytes.
  EXPECT_EQ(errorsOf("dims=[s,h] x=[h] y=[] pes=4x1", {120, 1024}, 49152),
            Errors{"per-PE tile of 61440 bytes overflows the 49152-byte PE SRAM"});
  EXPECT_TRUE(errorsOf("dims=[s,h] x=[h] y=[s] pes=4x2", {120, 1024}, 49152).empty());
}

TEST(Verify, DimOnBothAxes) {
  EXPECT_EQ(verifyStructure(parsed("dims=[b,hidden] x=[hidden] y=[b,hidden]")),
            Errors{"dim 'hidden' is mapped to both x and y"});
  EXPECT_EQ(verifyStructure(
                parsed("dims=[b,h] split=[b:2] x=[b.0,b.1] y=[b.1]")),
            Errors{"dim 'b.1' is mapped to both x and y"});
}

TEST(Verify, StructuralErrors) {
  auto check = [](const std::string &text, const std::string &message) {
    EXPECT_EQ(verifyStructure(parsed(text)), Errors{message}) << text;
  };
  check("dims=[b,b] x=[] y=[]", "dim 'b' appears twice in dims");
  check("dims=[b,h] x=[q] y=[b]", "x names unknown dim 'q'");
  check("dims=[b,h] x=[h,h] y=[b]", "dim 'h' appears twice on x");
  check("dims=[b,h] split=[q:2] x=[h] y=[b]", "split names unknown dim 'q'");
  check("dims=[b,h] split=[b:2,b:4] x=[h] y=[b.0]", "dim 'b' is split twice");
  check("dims=[b,h] split=[b:0] x=[h] y=[b.0]", "split factor of dim 'b' must be positive (got 0)");
  check("dims=[b,h] split=[b:2] x=[h] y=[b]",
        "dim 'b' is split; y must name its factors 'b.0' and 'b.1'");
  check("dims=[b,h] x=[h] y=[b.1]", "y names 'b.1', but dim 'b' is not split");
  check("dims=[b,h] x=[h] y=[q.0]", "y names unknown dim 'q.0'");
  check("dims=[b.0,h] x=[h] y=[]", "dim name 'b.0' is not an identifier");
}

TEST(Verify, ShapeErrors) {
  EXPECT_EQ(errorsOf("dims=[b,s,h] x=[h] y=[b] pes=2x2", {4, 4}),
            Errors{"layout names 3 dims but the tensor has rank 2"});
  EXPECT_EQ(errorsOf("dims=[b,h] x=[h] y=[b] pes=2x2", {-1, 4}),
            Errors{"dim 'b' has size -1; layouts need positive static sizes"});
  EXPECT_EQ(errorsOf("dims=[b,h] x=[h] y=[b]", {4, 4}),
            Errors{"layout spans no PEs (pes=0x0); set pes=WxH"});
  EXPECT_EQ(errorsOf("dims=[b,h] split=[b:4] x=[h] y=[b.0,b.1] pes=2x2 tiling=uneven", {6, 4}),
            Errors{"split factor 4 does not divide dim 'b' (size 6)"});
}

//===----------------------------------------------------------------------===//
// Text form
//===----------------------------------------------------------------------===//

TEST(Text, RoundTrips) {
  for (const char *text : {
           "dims=[b,s,h] x=[h] y=[b,s] tiling=exact",
           "dims=[b,s,h] split=[b:4] x=[b.0,h] y=[b.1,s] pes=924x920 tiling=uneven",
           "dims=[h1,h0] x=[h0] y=[] pes=924x920 tiling=pad",
           "dims=[] x=[] y=[] tiling=exact",
       })
    EXPECT_EQ(parsed(text).str(), text);
}

TEST(Text, FieldsInAnyOrderWithSpaces) {
  Layout l = parsed("  tiling = uneven y=[ b , s ] x=[h]  pes=8x4 dims=[b,s,h]  ");
  EXPECT_EQ(l.str(), "dims=[b,s,h] x=[h] y=[b,s] pes=8x4 tiling=uneven");
  EXPECT_EQ(l.tiling, Tiling::Uneven);
  EXPECT_EQ(l.pesX, 8);
  EXPECT_EQ(l.pesY, 4);
}

TEST(Text, ParseErrors) {
  EXPECT_EQ(parseError("x=[h] y=[b]"), "missing field 'dims'");
  EXPECT_EQ(parseError("dims=[b] z=[b]"),
            "unknown field 'z'; expected dims, split, x, y, pes or tiling");
  EXPECT_EQ(parseError("dims=[b] dims=[b]"), "field 'dims' given twice");
  EXPECT_EQ(parseError("dims [b]"), "expected '=' after 'dims'");
  EXPECT_EQ(parseError("dims=b"), "expected '[' after 'dims='");
  EXPECT_EQ(parseError("dims=[b h]"), "expected ',' or ']' in dims at 'h]'");
  EXPECT_EQ(parseError("dims=[b,]"), "expected a dim name in dims at ']'");
  EXPECT_EQ(parseError("dims=[b] split=[b]"), "expected 'dim:factor' in split at ']'");
  EXPECT_EQ(parseError("dims=[b] split=[b:x]"), "expected a factor after 'b:' in split");
  EXPECT_EQ(parseError("dims=[b] pes=8"), "expected pes=WxH (e.g. pes=924x920) at ''");
  EXPECT_EQ(parseError("dims=[b] tiling=ragged"),
            "unknown tiling 'ragged'; expected exact, pad or uneven");
  EXPECT_EQ(parseError("dims=[b] ,"), "expected a field name at ','");
  EXPECT_FALSE(parseLayout("dims=[b")); // no message asked for
}

TEST(Text, RenamedFollowsPositions) {
  Layout l = parsed("dims=[b,s,h1] split=[b:4] x=[b.0,h1] y=[b.1,s] pes=8x8 tiling=exact");
  EXPECT_EQ(l.renamed({"n", "t", "h"}).str(),
            "dims=[n,t,h] split=[n:4] x=[n.0,h] y=[n.1,t] pes=8x8 tiling=exact");
}

TEST(Text, EqualityComparesEveryField) {
  Layout a = parsed("dims=[b,h] x=[h] y=[b] pes=8x4");
  EXPECT_EQ(a, parsed("dims=[b,h] x=[h] y=[b] pes=8x4 tiling=exact"));
  EXPECT_NE(a, parsed("dims=[b,h] x=[h] y=[b] pes=8x4 tiling=pad"));
  EXPECT_NE(a, parsed("dims=[b,h] x=[h] y=[b] pes=8x2"));
  EXPECT_NE(a, parsed("dims=[b,h] split=[b:2] x=[h] y=[b.0,b.1] pes=8x4"));
}

} // namespace
