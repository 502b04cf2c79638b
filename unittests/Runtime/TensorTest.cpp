//===- TensorTest.cpp - Tensor helpers -------------------------------------===//

#include "wsc/Support/Error.h"
#include "wsc/Support/Tensor.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace wsc::rt;

namespace {

TEST(Tensor, ReshapeSharesAndChecks) {
  Tensor t = Tensor::fromFloats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r = t.reshaped({3, 2});
  EXPECT_EQ(r.rawData(), t.rawData());
  EXPECT_FALSE(t.isUnique());
  EXPECT_THROW(t.reshaped({4, 2}), Error);
  EXPECT_THROW(numElements({-1, 2}), Error);
  EXPECT_THROW(numElements({int64_t(1) << 30, int64_t(1) << 30}), Error);
}

TEST(Tensor, TransposeAllShapes) {
  // Covers the 8x8 register tiles and ragged edges.
  for (auto [rows, cols] : std::vector<std::pair<int, int>>{{1, 1}, {3, 5}, {8, 8}, {13, 11},
                                                           {64, 72}, {130, 9}}) {
    Tensor t = test::randomTensor({rows, cols}, rows * 100 + cols);
    Tensor tt = transpose2D(t);
    ASSERT_EQ(tt.shape(), (Shape{cols, rows}));
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        ASSERT_EQ(tt.data<float>()[j * rows + i], t.data<float>()[i * cols + j]);
  }
  Tensor ints = Tensor::fromInts({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(transpose2D(ints).toInts(), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
}

TEST(Tensor, SliceAndConcat) {
  Tensor t = Tensor::fromFloats({3, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Tensor a = sliceDim(t, 0, 0, 2), b = sliceDim(t, 0, 2, 3);
  EXPECT_EQ(b.toFloats(), (std::vector<float>{8, 9, 10, 11}));
  EXPECT_EQ(concatDim({a, b}, 0).toFloats(), t.toFloats());
  Tensor c = sliceDim(t, 1, 1, 2);
  EXPECT_EQ(c.toFloats(), (std::vector<float>{2, 3, 6, 7, 10, 11}));
  EXPECT_EQ(concatDim({sliceDim(t, 1, 0, 1), c}, 1).toFloats(), t.toFloats());
  EXPECT_THROW(sliceDim(t, 0, 2, 4), Error);
}

} // namespace

TEST(Tensor, ShapesMayDescribeMoreThanTheEmulatorAllocates) {
  // GPT-3 attention scores: a legal shape for --model-only schedules...
  const Shape scores = {1536, 96, 2048, 2048};
  EXPECT_EQ(numElements(scores), int64_t(1536) * 96 * 2048 * 2048);
  // ...but no tensor of it is ever allocated.
  try {
    Tensor::zeros(DType::F32, scores);
    FAIL() << "allocated " << numElements(scores) << " elements";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("too large for the emulator"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(numElements({int64_t(1) << 40, int64_t(1) << 20}), Error);
}
