//===- CsrTest.cpp - The CSR stream codec ----------------------------------===//

#include "wsc/Sparse/Csr.h"
#include "wsc/Sparse/ModelState.h"

#include "SparseTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace wsc::sparse;
using namespace wsc::sparse::test;

namespace {

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  // memcmp's pointers must not be null, even for no bytes (an empty vector's may be).
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

/// Encodes `dense`, then checks every way back: to dense (bitwise), to CSR
/// (same pattern), re-encoding, serialization, and the byte counts.
CsrStream roundTrip(const std::vector<float> &dense, int64_t rows, int64_t cols) {
  const CsrMatrix m = csrOf(dense, rows, cols);
  EXPECT_TRUE(validate(m)) << validate(m).message();
  const CsrStream s = encodeStream(m);

  Result<std::vector<float>> back = decodeToDense(s);
  EXPECT_TRUE(back.ok()) << back.error();
  if (back)
    EXPECT_TRUE(sameBits(back.value(), dense));

  Result<CsrMatrix> csr = decodeStream(s);
  EXPECT_TRUE(csr.ok()) << csr.error();
  if (csr) {
    EXPECT_EQ(csr.value().pattern, m.pattern);
    EXPECT_TRUE(sameBits(csr.value().values, m.values));
    EXPECT_EQ(encodeStream(csr.value()), s);
  }
  Result<CsrPattern> mask = decodeMask(s.index);
  EXPECT_TRUE(mask.ok()) << mask.error();
  if (mask)
    EXPECT_EQ(mask.value(), m.pattern);
  EXPECT_EQ(encodeMask(m.pattern), s.index);

  const std::vector<uint8_t> bytes = serialize(s);
  EXPECT_EQ(bytes.size(), kSerializedHeaderBytes + size_t(streamBytes(s).total()));
  Result<CsrStream> parsed = deserialize(bytes);
  EXPECT_TRUE(parsed.ok()) << parsed.error();
  if (parsed)
    EXPECT_EQ(parsed.value(), s);

  const StreamBytes b = streamBytes(s), predicted = predictStreamBytes(m.pattern);
  EXPECT_EQ(b.values, predicted.values);
  EXPECT_EQ(b.indices, predicted.indices);
  EXPECT_EQ(b.rowCounts, 4 * rows);
  EXPECT_EQ(b.values, 2 * (m.nnz() + fillerCount(m.pattern)));
  EXPECT_EQ(b.indices, b.values);
  EXPECT_EQ(streamBytes(s.index).values, 0);
  return s;
}

TEST(Csr, RoundTripRandom) {
  for (double density : {0.05, 0.3, 0.7}) {
    const std::vector<float> dense = randomSparse(37, 53, density, 7);
    const CsrStream s = roundTrip(dense, 37, 53);
    EXPECT_EQ(s.index.rowCounts.size(), 37u);
  }
}

TEST(Csr, DeltasFromColumnZeroAndFromThePreviousEntry) {
  // Row 0: columns 0, 3, 4; row 1: column 2.
  std::vector<float> dense(2 * 6, 0.0f);
  dense[0] = 1, dense[3] = 2, dense[4] = 3, dense[6 + 2] = 4;
  const CsrStream s = roundTrip(dense, 2, 6);
  EXPECT_EQ(s.index.rowCounts, (std::vector<uint32_t>{3, 1}));
  EXPECT_EQ(s.index.deltas, (std::vector<uint16_t>{0, 3, 1, 2}));
  EXPECT_EQ(s.values, (std::vector<uint16_t>{0x3c00, 0x4000, 0x4200, 0x4400}));
}

TEST(Csr, ValuesRoundToNearestEvenFP16) {
  const float tie = 1.0f + std::ldexp(1.0f, -11); // halfway between 1 and 1 + 2^-10
  const float above = std::nextafter(tie, 2.0f);
  std::vector<float> dense{tie, above, 1e-8f, 70000.0f};
  const CsrMatrix m = csrOf(dense, 1, 4);
  const CsrStream s = encodeStream(m);
  EXPECT_EQ(s.values, (std::vector<uint16_t>{0x3c00, 0x3c01, 0x0000, 0x7c00}));
  // 1e-8 rounds to FP16 zero but stays an entry of the mask.
  Result<CsrMatrix> back = decodeStream(s);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value().pattern, m.pattern);
  EXPECT_EQ(back.value().values[2], 0.0f);
  EXPECT_TRUE(std::isinf(back.value().values[3]));
}

TEST(Csr, EmptyRows) {
  std::vector<float> dense = randomSparse(9, 12, 0.5, 3);
  for (int64_t r : {0, 2, 3, 8})
    std::fill(dense.begin() + r * 12, dense.begin() + (r + 1) * 12, 0.0f);
  const CsrStream s = roundTrip(dense, 9, 12);
  for (int64_t r : {0, 2, 3, 8})
    EXPECT_EQ(s.index.rowCounts[r], 0u) << "row " << r;
}

TEST(Csr, AllZeroLayer) {
  const std::vector<float> dense(8 * 16, 0.0f);
  const CsrStream s = roundTrip(dense, 8, 16);
  EXPECT_EQ(s.entries(), 0);
  EXPECT_EQ(streamBytes(s).total(), 8 * 4); // the row counts alone
  EXPECT_EQ(serialize(s).size(), kSerializedHeaderBytes + 32);
  // Degenerate shapes.
  roundTrip({}, 0, 0);
  roundTrip({}, 3, 0);
  roundTrip({}, 0, 5);
}

TEST(Csr, FullyDenseLayer) {
  std::vector<float> dense = randomSparse(5, 7, 1.0, 11);
  const CsrStream s = roundTrip(dense, 5, 7);
  EXPECT_EQ(s.entries(), 35);
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t j = 0; j < 7; ++j)
      EXPECT_EQ(s.index.deltas[r * 7 + j], j == 0 ? 0 : 1);
  // A dense layer costs more as CSR than as a dense FP16 stream.
  EXPECT_EQ(streamBytes(s).total(), 35 * 4 + 5 * 4);
  EXPECT_EQ(denseStreamBytes(5, 7), 70);
  // With FP32 values each entry takes 4 + 2 bytes; indices and counts stay.
  const StreamBytes f32 = withValueBytes(streamBytes(s), 4);
  EXPECT_EQ(f32.values, 35 * 4);
  EXPECT_EQ(f32.indices, 35 * 2);
  EXPECT_EQ(f32.rowCounts, 5 * 4);
}

TEST(Csr, SingleColumn) {
  std::vector<float> dense{0.5f, 0, 0, -2.0f, 0, 1.0f};
  const CsrStream s = roundTrip(dense, 6, 1);
  EXPECT_EQ(s.index.rowCounts, (std::vector<uint32_t>{1, 0, 0, 1, 0, 1}));
  EXPECT_EQ(s.index.deltas, (std::vector<uint16_t>{0, 0, 0}));
  // Its transposed view is one row.
  const CsrMatrix t = transposed(csrOf(dense, 6, 1));
  EXPECT_EQ(t.rows(), 1);
  EXPECT_EQ(t.pattern.colIdx, (std::vector<int32_t>{0, 3, 5}));
  EXPECT_TRUE(checkTransposed(csrOf(dense, 6, 1), t));
}

TEST(Csr, DeltaOverflowUsesFillers) {
  // The example: 1 x 100000, non-zeros at columns 0 and 90000.
  std::vector<float> dense(100000, 0.0f);
  dense[0] = 1.5f;
  dense[90000] = -0.25f;
  const CsrStream s = roundTrip(dense, 1, 100000);
  EXPECT_EQ(s.index.rowCounts, (std::vector<uint32_t>{3}));
  EXPECT_EQ(s.index.deltas, (std::vector<uint16_t>{0, kFillerDelta, 90000 - 65535}));
  EXPECT_EQ(s.values[1], 0); // the filler is zero-valued
  const StreamBytes b = streamBytes(s);
  EXPECT_EQ(b.values, 6);
  EXPECT_EQ(b.indices, 6);
  EXPECT_EQ(b.rowCounts, 4);
  EXPECT_EQ(b.total(), 16);
  EXPECT_EQ(fillerCount(csrOf(dense, 1, 100000).pattern), 1);
  // The mask (and the gradient stream) has the two real entries only.
  EXPECT_EQ(decodeMask(s.index).value().nnz(), 2);
}

TEST(Csr, DeltaOverflowBoundaries) {
  struct Case {
    std::vector<int64_t> cols;
    int64_t fillers;
  };
  const int64_t width = 300000;
  const std::vector<Case> cases = {
      {{65534}, 0},                 // largest first delta without a filler
      {{65535}, 1},                 // filler, then delta 0
      {{131069}, 1},                // filler, then 65534
      {{131070}, 2},                // two fillers, then delta 0
      {{0, 65535}, 1},              // gap 65535 after an entry
      {{5, 65539}, 0},              // gap 65534
      {{1, 200000, 200001}, 3},     // 199999 = 3 * 65535 + 3394
      {{width - 1}, (width - 1) / 65535},
  };
  for (const Case &c : cases) {
    std::vector<float> dense(width, 0.0f);
    for (int64_t col : c.cols)
      dense[col] = 1.0f;
    SCOPED_TRACE(c.cols.back());
    const CsrStream s = roundTrip(dense, 1, width);
    EXPECT_EQ(s.entries(), int64_t(c.cols.size()) + c.fillers);
    EXPECT_EQ(fillerCount(csrOf(dense, 1, width).pattern), c.fillers);
  }
}

TEST(Csr, ZeroValuedMaskEntryAfterAFillerStaysInTheMask) {
  // A masked weight that is currently 0 (e.g. just regrown) at the filler's
  // own column: the filler (delta 65535) and the entry (delta 0) are told
  // apart by the delta, not the value.
  CsrPattern p;
  p.rows = 1;
  p.cols = 70000;
  p.rowPtr = {0, 1};
  p.colIdx = {65535};
  const CsrMatrix m{p, {0.0f}};
  const CsrStream s = encodeStream(m);
  EXPECT_EQ(s.index.deltas, (std::vector<uint16_t>{kFillerDelta, 0}));
  EXPECT_EQ(s.values, (std::vector<uint16_t>{0, 0}));
  Result<CsrMatrix> back = decodeStream(s);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value().pattern, p);
}

TEST(Csr, PatternsFromMasksAndDense) {
  const std::vector<uint8_t> mask{1, 0, 0, 7, 0, 1};
  CsrPattern p = patternFromMask(mask, 2, 3).value();
  EXPECT_EQ(p.rowPtr, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(p.colIdx, (std::vector<int32_t>{0, 0, 2}));
  EXPECT_EQ(toMask(p), (std::vector<uint8_t>{1, 0, 0, 1, 0, 1}));
  EXPECT_DOUBLE_EQ(p.density(), 0.5);

  // -0.0 is zero; NaN is a non-zero.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CsrPattern q = patternFromDense({-0.0f, nan, 0.0f, 2.0f}, 1, 4).value();
  EXPECT_EQ(q.colIdx, (std::vector<int32_t>{1, 3}));

  EXPECT_FALSE(patternFromMask(mask, 4, 2).ok());
  EXPECT_NE(patternFromMask(mask, 4, 2).error().find("6 elements"), std::string::npos);
  EXPECT_FALSE(patternFromDense({}, -1, 0).ok());
  EXPECT_FALSE(gatherMasked(std::vector<float>(5), p).ok());
}

TEST(Csr, ValidateRejectsBrokenPatterns) {
  CsrPattern good = patternFromMask({1, 1, 0, 1}, 2, 2).value();
  ASSERT_TRUE(validate(good));
  CsrPattern p = good;
  p.colIdx = {1, 0, 1};
  EXPECT_NE(validate(p).message().find("increase strictly"), std::string::npos);
  p = good;
  p.colIdx[2] = 2;
  EXPECT_NE(validate(p).message().find("out of range"), std::string::npos);
  p = good;
  p.rowPtr = {0, 3};
  EXPECT_FALSE(validate(p));
  p = good;
  p.rowPtr = {0, 3, 2};
  EXPECT_FALSE(validate(p));
  EXPECT_FALSE(validate(CsrMatrix{good, {1.0f}}));
}

//===-- Transposed view -----------------------------------------------------===//

TEST(Csr, TransposedViewIsTheCscOfW) {
  const int64_t rows = 30, cols = 45;
  const std::vector<float> dense = randomSparse(rows, cols, 0.2, 5);
  const CsrMatrix w = csrOf(dense, rows, cols);
  const CsrMatrix t = transposed(w);
  ASSERT_TRUE(validate(t));
  EXPECT_EQ(t.rows(), cols);
  EXPECT_EQ(t.cols(), rows);
  EXPECT_EQ(t.nnz(), w.nnz());
  const std::vector<float> td = toDense(t);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      ASSERT_EQ(td[c * rows + r], dense[r * cols + c]);
  EXPECT_TRUE(checkTransposed(w, t));
  EXPECT_EQ(transposed(t).pattern, w.pattern); // an involution

  // One copy of the values serves both views.
  const TransposedPattern tp = transposePattern(w.pattern);
  EXPECT_TRUE(checkTransposed(w.pattern, tp));
  std::vector<float> gathered(static_cast<size_t>(tp.pattern.nnz()));
  gatherTransposedValues(tp, w.values.data(), gathered.data());
  EXPECT_TRUE(sameBits(gathered, t.values));

  // The streams: the backward stream is the transposed view's.
  EXPECT_TRUE(checkTransposed(encodeStream(w), encodeStream(t)));
  EXPECT_FALSE(checkTransposed(encodeStream(w), encodeStream(w)));
}

TEST(Csr, TransposedViewInconsistenciesAreNamed) {
  const std::vector<float> dense = randomSparse(12, 10, 0.4, 9);
  const CsrMatrix w = csrOf(dense, 12, 10);
  const CsrMatrix t = transposed(w);

  CsrMatrix changed = t;
  changed.values[3] += 1.0f;
  Status s = checkTransposed(w, changed);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("transposed value"), std::string::npos) << s.message();

  // The mask changed on one side only: drop the last entry of the forward view.
  CsrMatrix shrunk = w;
  const int64_t last = w.nnz() - 1;
  int64_t row = 0;
  while (w.pattern.rowPtr[row + 1] <= last)
    ++row;
  const int64_t col = w.pattern.colIdx[last];
  shrunk.pattern.colIdx.pop_back();
  shrunk.values.pop_back();
  for (int64_t r = row + 1; r <= w.rows(); ++r)
    --shrunk.pattern.rowPtr[r];
  s = checkTransposed(shrunk, t);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("(" + std::to_string(row) + ", " + std::to_string(col) +
                             ") is in the transposed view but not in the forward view"),
            std::string::npos)
      << s.message();

  EXPECT_NE(checkTransposed(w, w).message().find("expected 10x12"), std::string::npos);

  TransposedPattern tp = transposePattern(w.pattern);
  std::swap(tp.forwardIndex[0], tp.forwardIndex[1]);
  EXPECT_FALSE(checkTransposed(w.pattern, tp));
}

TEST(Csr, TransposedViewOfAWideRowNeedsNoFillers) {
  std::vector<float> dense(100000, 0.0f);
  dense[0] = 1.0f;
  dense[90000] = 2.0f;
  const CsrMatrix t = transposed(csrOf(dense, 1, 100000));
  EXPECT_EQ(t.rows(), 100000);
  EXPECT_EQ(fillerCount(t.pattern), 0);
  EXPECT_EQ(encodeStream(t).entries(), 2);
}

//===-- Gradients in mask order --------------------------------------------===//

TEST(Csr, GradientRequestBytesTakeTheSmallerEncoding) {
  // Every entry: a flag, the gradient streams dense.
  const int64_t rows = 64, cols = 1000;
  std::vector<uint8_t> all(rows * cols, 1);
  EXPECT_EQ(gradientRequestBytes(patternFromMask(all, rows, cols).value()), 0);
  // 1% of the entries: deltas and row counts (2 x 640 + 4 x 64) beat the
  // 8000-byte bitmap.
  std::vector<uint8_t> few(rows * cols, 0);
  for (int64_t i = 0; i < rows * cols; i += 100)
    few[i] = 1;
  const CsrPattern sparse = patternFromMask(few, rows, cols).value();
  EXPECT_EQ(gradientRequestBytes(sparse), 2 * 640 + 4 * 64);
  // Half the entries: the bitmap, ceil(64000 / 8).
  std::vector<uint8_t> half(rows * cols, 0);
  for (int64_t i = 0; i < rows * cols; i += 2)
    half[i] = 1;
  EXPECT_EQ(gradientRequestBytes(patternFromMask(half, rows, cols).value()), 8000);
  // Fillers count: a lone entry past column 65535 needs one.
  std::vector<uint8_t> wide(70000, 0);
  wide[69999] = 1;
  const CsrPattern far = patternFromMask(wide, 1, 70000).value();
  EXPECT_EQ(gradientRequestBytes(far), predictStreamBytes(far).indices + 4);
  EXPECT_GT(predictStreamBytes(far).indices, 2);
}

TEST(Csr, GradientsInMaskOrder) {
  const int64_t rows = 6, cols = 8;
  const CsrPattern mask = patternFromDense(randomSparse(rows, cols, 0.3, 21), rows, cols).value();
  const std::vector<float> grad = randomDense(rows * cols, 22);
  const std::vector<float> packed = packMaskOrder(grad, mask).value();
  ASSERT_EQ(int64_t(packed.size()), mask.nnz());
  EXPECT_EQ(gradientStreamBytes(mask), 4 * mask.nnz());
  // Row-major order of the masked positions.
  size_t e = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      if (toMask(mask)[r * cols + c])
        EXPECT_EQ(packed[e++], grad[r * cols + c]);
  EXPECT_EQ(e, packed.size());

  const std::vector<float> back = scatterMaskOrder(packed, mask).value();
  const std::vector<uint8_t> bits = toMask(mask);
  for (int64_t i = 0; i < rows * cols; ++i)
    EXPECT_EQ(back[i], bits[i] ? grad[i] : 0.0f);

  EXPECT_FALSE(packMaskOrder(std::vector<float>(3), mask).ok());
  Result<std::vector<float>> bad = scatterMaskOrder(std::vector<float>(packed.size() + 1), mask);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("the mask"), std::string::npos);
}

TEST(Csr, GradientMaskMayDifferFromTheWeightMask) {
  // Regrowth: MemoryX asks for gradients of zero weights too, so the
  // gradient mask is a superset; the gradient still comes in its order.
  const int64_t rows = 4, cols = 5;
  const std::vector<float> w = randomSparse(rows, cols, 0.3, 31);
  std::vector<uint8_t> bits(rows * cols, 0);
  for (int64_t i = 0; i < rows * cols; ++i)
    bits[i] = w[i] != 0.0f || i % 3 == 0;
  const CsrPattern gradMask = patternFromMask(bits, rows, cols).value();
  const std::vector<float> grad = randomDense(rows * cols, 32);
  const std::vector<float> packed = packMaskOrder(grad, gradMask).value();
  EXPECT_GT(gradMask.nnz(), patternFromDense(w, rows, cols).value().nnz());
  ASSERT_EQ(int64_t(packed.size()), gradMask.nnz());
  const std::vector<float> back = scatterMaskOrder(packed, gradMask).value();
  for (int64_t i = 0; i < rows * cols; ++i)
    EXPECT_EQ(back[i], bits[i] ? grad[i] : 0.0f);
  // The request stream is the mask's index component.
  EXPECT_EQ(decodeMask(encodeMask(gradMask)).value(), gradMask);
}

//===-- Byte counts -------------------------------------------------------------===//

TEST(Csr, NinetyPercentSparseStreamIsAFifthOfDense) {
  // A 4096 x 4096 layer pruned by magnitude to 90% sparsity.
  const int64_t rows = 4096, cols = 4096, n = rows * cols;
  const std::vector<float> w = randomDense(n, 41);
  const int64_t keep = nnzAtSparsity(n, 0.9);
  std::vector<int32_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    order[i] = int32_t(i);
  // The `keep` largest magnitudes (ties broken by position).
  std::nth_element(order.begin(), order.begin() + keep, order.end(), [&](int32_t a, int32_t b) {
    const float ma = std::fabs(w[a]), mb = std::fabs(w[b]);
    return ma != mb ? ma > mb : a < b;
  });
  std::vector<uint8_t> bits(w.size(), 0);
  for (int64_t i = 0; i < keep; ++i)
    bits[order[i]] = 1;
  const CsrPattern mask = patternFromMask(bits, rows, cols).value();
  ASSERT_EQ(mask.nnz(), keep);
  const CsrStream s = encodeStream(gatherMasked(w.data(), mask));
  const StreamBytes b = streamBytes(s);
  const double dense = double(denseStreamBytes(rows, cols));
  // Values + indices (the measure) are at most a fifth of dense...
  EXPECT_LE(b.payload(), 0.2 * dense);
  // ... and the 4-byte row counts add 2 / cols on top.
  EXPECT_LE(b.total(), 0.2 * dense + 4.0 * rows);
  EXPECT_NEAR(b.total() / dense, 0.2 + 2.0 / cols, 1e-6);
  EXPECT_EQ(fillerCount(mask), 0);
  // The gradient stream (FP32, mask order) is a fifth of a dense FP32 one.
  EXPECT_LE(gradientStreamBytes(mask), 0.2 * 4 * double(n));
}

//===-- Malformed streams ---------------------------------------------------===//

/// Five rows of 70000 columns; row 2 holds columns 3 and 69999 only, so its
/// stream is {delta 3, filler, delta 4461}.
CsrStream sampleStream() {
  std::vector<float> dense = randomSparse(5, 70000, 0.0003, 51);
  std::fill(dense.begin() + 2 * 70000, dense.begin() + 3 * 70000, 0.0f);
  dense[2 * 70000 + 3] = 0.5f;
  dense[2 * 70000 + 69999] = 1.0f;
  return encodeStream(csrOf(dense, 5, 70000));
}

void expectRejected(const std::vector<uint8_t> &bytes, const std::string &needle) {
  Result<CsrStream> r = deserialize(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().rfind("csr stream: ", 0), 0u) << r.error();
  EXPECT_NE(r.error().find(needle), std::string::npos) << r.error();
}

TEST(CsrMalformed, EveryTruncationIsRejected) {
  const std::vector<uint8_t> bytes = serialize(sampleStream());
  ASSERT_TRUE(deserialize(bytes).ok());
  for (size_t len = 0; len < bytes.size(); ++len) {
    Result<CsrStream> r = deserialize(bytes.data(), len);
    ASSERT_FALSE(r.ok()) << "prefix of " << len << " bytes accepted";
  }
  expectRejected({}, "shorter than the 20-byte header");
  expectRejected(std::vector<uint8_t>(bytes.begin(), bytes.end() - 1), "truncated");
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  expectRejected(longer, "1 trailing bytes");
}

TEST(CsrMalformed, HeaderProblems) {
  std::vector<uint8_t> bytes = serialize(sampleStream());
  std::vector<uint8_t> b = bytes;
  b[0] = 'X';
  expectRejected(b, "bad magic");
  b = bytes;
  b[7] = 0x80; // rows >= 2^31
  expectRejected(b, "outside");
  b = bytes;
  b[19] = 0x01; // 2^56 more entries: refused before allocating
  expectRejected(b, "truncated");
  b = bytes;
  b[12] -= 1; // one entry fewer than the rows hold
  expectRejected(b, "more entries than the header");
}

/// Byte offset of entry `e` of row `r` in a serialized stream.
size_t entryOffset(const CsrStream &s, int64_t r, int64_t j) {
  size_t off = kSerializedHeaderBytes;
  for (int64_t i = 0; i < r; ++i)
    off += 4 + 4 * size_t(s.index.rowCounts[i]);
  return off + 4 + 4 * size_t(j);
}

TEST(CsrMalformed, IndexProblems) {
  const CsrStream s = sampleStream();
  const std::vector<uint8_t> bytes = serialize(s);
  ASSERT_EQ(s.index.rowCounts[2], 3u);
  size_t row2 = 0;
  for (int64_t r = 0; r < 2; ++r)
    row2 += s.index.rowCounts[r];
  ASSERT_EQ(s.index.deltas[row2 + 1], kFillerDelta);

  // A delta that runs past the row: 3 + 65535 + 65534.
  std::vector<uint8_t> b = bytes;
  size_t off = entryOffset(s, 2, 2);
  b[off + 2] = 0xfe, b[off + 3] = 0xff;
  expectRejected(b, "column 131072 out of range [0, 70000)");

  // A filler with a value.
  b = bytes;
  off = entryOffset(s, 2, 1);
  b[off] = 0x00, b[off + 1] = 0x3c;
  expectRejected(b, "filler has the non-zero value 0x3c00");

  // A filler past the row, and a row that ends with a filler.
  CsrStream t = s;
  t.index.deltas[row2 + 2] = kFillerDelta;
  t.values[row2 + 2] = 0;
  expectRejected(serialize(t), "filler reaches column 131073 beyond the row");
  {
    CsrStream u;
    u.index.rows = 1, u.index.cols = 100000;
    u.index.rowCounts = {1};
    u.index.deltas = {kFillerDelta};
    u.values = {0};
    expectRejected(serialize(u), "ends with a filler");
  }

  // A repeated column (delta 0 after a real entry), in a row without fillers.
  const int64_t row = s.index.rowCounts[0] >= 2 ? 0 : 1;
  ASSERT_GE(s.index.rowCounts[row], 2u);
  b = bytes;
  off = entryOffset(s, row, s.index.rowCounts[row] - 1);
  b[off + 2] = 0, b[off + 3] = 0;
  expectRejected(b, "delta 0 repeats column");
}

TEST(CsrMalformed, InMemoryStreamsAreChecked) {
  CsrStream s = sampleStream();
  CsrStream t = s;
  t.values.pop_back();
  EXPECT_NE(decodeStream(t).error().find("values for"), std::string::npos);
  t = s;
  t.index.rowCounts.pop_back();
  EXPECT_NE(decodeStream(t).error().find("row counts"), std::string::npos);
  t = s;
  t.index.rowCounts[0] += 1;
  EXPECT_NE(decodeMask(t.index).error().find("add up to"), std::string::npos);
  t = s;
  t.index.cols = -3;
  EXPECT_FALSE(decodeToDense(t).ok());
}

TEST(CsrMalformed, RandomCorruptionNeverCrashes) {
  const std::vector<uint8_t> bytes = serialize(encodeStream(csrOf(randomSparse(7, 300, 0.2, 61), 7, 300)));
  std::mt19937 rng(62);
  int accepted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> b = bytes;
    const int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f)
      b[rng() % b.size()] ^= uint8_t(1u << (rng() % 8));
    if (rng() % 8 == 0)
      b.resize(rng() % b.size());
    Result<CsrStream> r = deserialize(b);
    if (!r)
      continue;
    ++accepted; // whatever is accepted decodes
    ASSERT_TRUE(decodeStream(r.value()).ok());
    ASSERT_EQ(serialize(r.value()), b);
  }
  EXPECT_GT(accepted, 0); // value bit flips are legal streams
}

} // namespace
