//===- SlicesTest.cpp - extract_slice / insert_slice on the emulator ------===//

#include "../../lib/Runtime/Slices.h"

#include <gtest/gtest.h>

using namespace wsc::rt;

namespace {

Tensor iota(const Shape &shape) {
  std::vector<float> v(numElements(shape));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i);
  return Tensor::fromFloats(shape, v);
}

TEST(Slices, ExtractsAStridedBox) {
  // [[0 1 2 3] [4 5 6 7] [8 9 10 11]]: rows 1.., columns 1 and 3.
  Tensor t = iota({3, 4});
  Tensor s = extractSlice(t, {1, 1}, {2, 2}, {1, 2});
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  EXPECT_EQ(s.toFloats(), (std::vector<float>{5, 7, 9, 11}));
}

TEST(Slices, ExtractsContiguousRunsAndEmptyBoxes) {
  Tensor t = iota({2, 3, 4});
  EXPECT_EQ(extractSlice(t, {1, 0, 1}, {1, 2, 3}, {1, 1, 1}).toFloats(),
            (std::vector<float>{13, 14, 15, 17, 18, 19}));
  EXPECT_EQ(extractSlice(t, {0, 0, 0}, {2, 0, 4}, {1, 1, 1}).numel(), 0);
}

TEST(Slices, InsertsWithoutTouchingTheSource) {
  Tensor dest = Tensor::zeros(DType::F32, {2, 5});
  Tensor keep = dest; // a second reference: the insert must copy
  Tensor piece = Tensor::fromFloats({2, 2}, {1, 2, 3, 4});
  Tensor out = insertSlice(piece, dest, {0, 1}, {2, 2}, {1, 3});
  EXPECT_EQ(out.toFloats(), (std::vector<float>{0, 1, 0, 0, 2, 0, 3, 0, 0, 4}));
  EXPECT_EQ(keep.toFloats(), std::vector<float>(10, 0.0f));
}

TEST(Slices, InsertUpdatesAUniqueDestinationInPlace) {
  Tensor dest = Tensor::zeros(DType::I64, {4});
  const void *storage = dest.rawData();
  Tensor out = insertSlice(Tensor::fromInts({2}, {7, 9}), std::move(dest), {1}, {2}, {2});
  EXPECT_EQ(out.rawData(), storage);
  EXPECT_EQ(out.toInts(), (std::vector<int64_t>{0, 7, 0, 9}));
}

} // namespace
