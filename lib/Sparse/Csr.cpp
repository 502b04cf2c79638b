//===- Csr.cpp - Sparsity masks, FP32 CSR and the CSR weight stream --------===//

#include "wsc/Sparse/Csr.h"

#include "wsc/Support/DType.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>

namespace wsc::sparse {

namespace {

/// The column step of one filler.
constexpr int64_t kFillerStep = int64_t(kMaxDelta) + 1;

Status fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
Status fail(const char *fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return Status::error(buf);
}

Status checkDims(int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 0 || rows > kMaxDim || cols > kMaxDim)
    return fail("matrix shape %" PRId64 "x%" PRId64 " is outside [0, %" PRId64 "] per dim",
                rows, cols, kMaxDim);
  return {};
}

Status checkSize(size_t have, int64_t rows, int64_t cols, const char *what) {
  if (Status s = checkDims(rows, cols); !s)
    return s;
  if (static_cast<int64_t>(have) != rows * cols)
    return fail("%s holds %zu elements, expected %" PRId64 "x%" PRId64 " = %" PRId64, what,
                have, rows, cols, rows * cols);
  return {};
}

/// Builds a pattern from a predicate on the row-major position.
template <typename Keep> CsrPattern buildPattern(int64_t rows, int64_t cols, Keep keep) {
  CsrPattern p;
  p.rows = rows;
  p.cols = cols;
  p.rowPtr.assign(static_cast<size_t>(rows) + 1, 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c)
      if (keep(r * cols + c))
        p.colIdx.push_back(static_cast<int32_t>(c));
    p.rowPtr[r + 1] = p.nnz();
  }
  return p;
}

/// Walks a mask stream, validating it, and calls `onEntry(row, col, entry)`
/// for every real entry (entry = its position in the stream, fillers
/// counted). `values` (may be null) are checked to be 0 at fillers.
/// The shape, one count per row, and counts that add up to the entries.
Status checkCounts(const MaskStream &s) {
  if (Status st = checkDims(s.rows, s.cols); !st)
    return st;
  if (static_cast<int64_t>(s.rowCounts.size()) != s.rows)
    return fail("stream has %zu row counts for %" PRId64 " rows", s.rowCounts.size(), s.rows);
  int64_t total = 0;
  for (uint32_t n : s.rowCounts)
    total += n;
  if (total != s.entries())
    return fail("row counts add up to %" PRId64 " entries but the stream holds %" PRId64, total,
                s.entries());
  return {};
}

template <typename OnEntry>
Status walkStream(const MaskStream &s, const uint16_t *values, OnEntry onEntry) {
  if (Status st = checkCounts(s); !st)
    return st;
  int64_t e = 0;
  for (int64_t r = 0; r < s.rows; ++r) {
    const int64_t n = s.rowCounts[r];
    int64_t col = 0;
    bool zeroDeltaAllowed = true; // first entry, or right after a filler
    for (int64_t j = 0; j < n; ++j, ++e) {
      const uint16_t d = s.deltas[e];
      if (d == kFillerDelta) {
        col += kFillerStep;
        if (col >= s.cols)
          return fail("row %" PRId64 " entry %" PRId64 ": filler reaches column %" PRId64
                      " beyond the row's %" PRId64 " columns",
                      r, j, col, s.cols);
        if (values && values[e] != 0)
          return fail("row %" PRId64 " entry %" PRId64 ": filler has the non-zero value 0x%04x",
                      r, j, values[e]);
        if (j == n - 1)
          return fail("row %" PRId64 " ends with a filler (no entry follows it)", r);
        zeroDeltaAllowed = true;
        continue;
      }
      if (d == 0 && !zeroDeltaAllowed)
        return fail("row %" PRId64 " entry %" PRId64 ": delta 0 repeats column %" PRId64, r, j,
                    col);
      col += d;
      if (col >= s.cols)
        return fail("row %" PRId64 " entry %" PRId64 ": column %" PRId64
                    " out of range [0, %" PRId64 ")",
                    r, j, col, s.cols);
      onEntry(r, col, e);
      zeroDeltaAllowed = false;
    }
  }
  return {};
}

/// Decodes the pattern, and with `values` the entries' stream positions.
Result<CsrPattern> decodePattern(const MaskStream &s, const uint16_t *values,
                                 std::vector<int64_t> *positions) {
  CsrPattern p;
  p.rows = s.rows;
  p.cols = s.cols;
  if (Status c = checkCounts(s); !c) // before allocating for the rows
    return c;
  Status st;
  try {
    p.rowPtr.assign(static_cast<size_t>(s.rows) + 1, 0);
    p.colIdx.reserve(s.deltas.size());
    st = walkStream(s, values, [&](int64_t r, int64_t col, int64_t e) {
      p.colIdx.push_back(static_cast<int32_t>(col));
      p.rowPtr[r + 1] = p.nnz();
      if (positions)
        positions->push_back(e);
    });
  } catch (const std::exception &) { // bad_alloc, length_error
    return Status::error("out of memory decoding the stream");
  }
  if (!st)
    return st;
  for (int64_t r = 0; r < p.rows; ++r) // rows without entries
    p.rowPtr[r + 1] = std::max(p.rowPtr[r + 1], p.rowPtr[r]);
  return p;
}

/// Appends the fillers and the delta of a real entry `gap` columns after the
/// previous entry (or after column 0).
void appendDeltas(int64_t gap, std::vector<uint16_t> &deltas, std::vector<uint16_t> *values,
                  uint16_t value) {
  for (int64_t k = gap / kFillerStep; k > 0; --k) {
    deltas.push_back(kFillerDelta);
    if (values)
      values->push_back(0);
  }
  deltas.push_back(static_cast<uint16_t>(gap % kFillerStep));
  if (values)
    values->push_back(value);
}

MaskStream encodeIndex(const CsrPattern &p, const uint16_t *half, std::vector<uint16_t> *values) {
  MaskStream s;
  s.rows = p.rows;
  s.cols = p.cols;
  s.rowCounts.resize(static_cast<size_t>(p.rows));
  s.deltas.reserve(static_cast<size_t>(p.nnz()));
  if (values)
    values->reserve(static_cast<size_t>(p.nnz()));
  for (int64_t r = 0; r < p.rows; ++r) {
    const size_t before = s.deltas.size();
    int64_t base = 0;
    for (int64_t e = p.rowPtr[r]; e < p.rowPtr[r + 1]; ++e) {
      appendDeltas(p.colIdx[e] - base, s.deltas, values, half ? half[e] : 0);
      base = p.colIdx[e];
    }
    s.rowCounts[r] = static_cast<uint32_t>(s.deltas.size() - before);
  }
  return s;
}

/// "(n, k)": a weight of W by its row and column.
std::string weightName(int64_t n, int64_t k) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "(%" PRId64 ", %" PRId64 ")", n, k);
  return buf;
}

void putU32(std::vector<uint8_t> &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void putU16(std::vector<uint8_t> &out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}
uint64_t getLE(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return v;
}

constexpr char kMagic[4] = {'W', 'C', 'S', 'R'};

} // namespace

//===-- Patterns ------------------------------------------------------------===//

double CsrPattern::density() const {
  return rows * cols == 0 ? 0.0 : double(nnz()) / (double(rows) * double(cols));
}

Status validate(const CsrPattern &p) {
  if (Status s = checkDims(p.rows, p.cols); !s)
    return s;
  if (static_cast<int64_t>(p.rowPtr.size()) != p.rows + 1)
    return fail("rowPtr has %zu offsets for %" PRId64 " rows (expected rows + 1)",
                p.rowPtr.size(), p.rows);
  if (p.rowPtr.front() != 0 || p.rowPtr.back() != p.nnz())
    return fail("rowPtr runs from %" PRId64 " to %" PRId64 ", expected 0 to nnz = %" PRId64,
                p.rowPtr.front(), p.rowPtr.back(), p.nnz());
  for (int64_t r = 0; r < p.rows; ++r) {
    if (p.rowPtr[r + 1] < p.rowPtr[r] || p.rowPtr[r + 1] > p.nnz())
      return fail("rowPtr decreases or overruns at row %" PRId64, r);
    int64_t prev = -1;
    for (int64_t e = p.rowPtr[r]; e < p.rowPtr[r + 1]; ++e) {
      const int64_t c = p.colIdx[e];
      if (c < 0 || c >= p.cols)
        return fail("row %" PRId64 ": column %" PRId64 " out of range [0, %" PRId64 ")", r, c,
                    p.cols);
      if (c <= prev)
        return fail("row %" PRId64 ": column %" PRId64 " after %" PRId64
                    " (columns must increase strictly)",
                    r, c, prev);
      prev = c;
    }
  }
  return {};
}

Status validate(const CsrMatrix &m) {
  if (Status s = validate(m.pattern); !s)
    return s;
  if (static_cast<int64_t>(m.values.size()) != m.nnz())
    return fail("%zu values for %" PRId64 " entries", m.values.size(), m.nnz());
  return {};
}

Result<CsrPattern> patternFromMask(const std::vector<uint8_t> &mask, int64_t rows,
                                   int64_t cols) {
  if (Status s = checkSize(mask.size(), rows, cols, "mask"); !s)
    return s;
  return buildPattern(rows, cols, [&](int64_t i) { return mask[i] != 0; });
}

Result<CsrPattern> patternFromDense(const std::vector<float> &dense, int64_t rows,
                                    int64_t cols) {
  if (Status s = checkSize(dense.size(), rows, cols, "dense matrix"); !s)
    return s;
  return buildPattern(rows, cols, [&](int64_t i) { return dense[i] != 0.0f; });
}

std::vector<uint8_t> toMask(const CsrPattern &p) {
  std::vector<uint8_t> mask(static_cast<size_t>(p.rows * p.cols), 0);
  for (int64_t r = 0; r < p.rows; ++r)
    for (int64_t e = p.rowPtr[r]; e < p.rowPtr[r + 1]; ++e)
      mask[r * p.cols + p.colIdx[e]] = 1;
  return mask;
}

CsrMatrix gatherMasked(const float *dense, const CsrPattern &p) {
  CsrMatrix m{p, std::vector<float>(static_cast<size_t>(p.nnz()))};
  for (int64_t r = 0; r < p.rows; ++r)
    for (int64_t e = p.rowPtr[r]; e < p.rowPtr[r + 1]; ++e)
      m.values[e] = dense[r * p.cols + p.colIdx[e]];
  return m;
}

Result<CsrMatrix> gatherMasked(const std::vector<float> &dense, const CsrPattern &p) {
  if (Status s = validate(p); !s)
    return s;
  if (Status s = checkSize(dense.size(), p.rows, p.cols, "dense matrix"); !s)
    return s;
  return gatherMasked(dense.data(), p);
}

std::vector<float> toDense(const CsrMatrix &m) {
  const CsrPattern &p = m.pattern;
  std::vector<float> dense(static_cast<size_t>(p.rows * p.cols), 0.0f);
  for (int64_t r = 0; r < p.rows; ++r)
    for (int64_t e = p.rowPtr[r]; e < p.rowPtr[r + 1]; ++e)
      dense[r * p.cols + p.colIdx[e]] = m.values[e];
  return dense;
}

//===-- Transposed view -----------------------------------------------------===//

TransposedPattern transposePattern(const CsrPattern &f) {
  TransposedPattern t;
  CsrPattern &p = t.pattern;
  p.rows = f.cols;
  p.cols = f.rows;
  p.rowPtr.assign(static_cast<size_t>(f.cols) + 1, 0);
  for (int32_t c : f.colIdx)
    ++p.rowPtr[c + 1];
  for (int64_t k = 0; k < f.cols; ++k)
    p.rowPtr[k + 1] += p.rowPtr[k];
  p.colIdx.resize(f.colIdx.size());
  t.forwardIndex.resize(f.colIdx.size());
  std::vector<int64_t> next(p.rowPtr.begin(), p.rowPtr.end() - 1);
  for (int64_t n = 0; n < f.rows; ++n) // ascending rows: sorted columns of W^T
    for (int64_t e = f.rowPtr[n]; e < f.rowPtr[n + 1]; ++e) {
      const int64_t pos = next[f.colIdx[e]]++;
      p.colIdx[pos] = static_cast<int32_t>(n);
      t.forwardIndex[pos] = e;
    }
  return t;
}

void gatherTransposedValues(const TransposedPattern &t, const float *forwardValues, float *out) {
  const int64_t n = t.pattern.nnz();
  const int64_t *idx = t.forwardIndex.data();
  for (int64_t e = 0; e < n; ++e)
    out[e] = forwardValues[idx[e]];
}

CsrMatrix transposed(const CsrMatrix &forward) {
  TransposedPattern t = transposePattern(forward.pattern);
  std::vector<float> values(static_cast<size_t>(t.pattern.nnz()));
  gatherTransposedValues(t, forward.values.data(), values.data());
  return CsrMatrix{std::move(t.pattern), std::move(values)};
}

Status checkTransposed(const CsrPattern &forward, const TransposedPattern &t) {
  if (Status s = validate(forward); !s)
    return Status::error("forward view: " + s.message());
  if (Status s = validate(t.pattern); !s)
    return Status::error("transposed view: " + s.message());
  const TransposedPattern want = transposePattern(forward);
  if (t.pattern != want.pattern)
    return Status::error("the transposed pattern does not hold the forward pattern's entries");
  if (t.forwardIndex != want.forwardIndex)
    return Status::error("the transposed view's forward indices do not point at its entries");
  return {};
}

Status checkTransposed(const CsrMatrix &forward, const CsrMatrix &backward) {
  if (Status s = validate(forward); !s)
    return Status::error("forward view: " + s.message());
  if (Status s = validate(backward); !s)
    return Status::error("transposed view: " + s.message());
  if (backward.rows() != forward.cols() || backward.cols() != forward.rows())
    return fail("transposed view is %" PRId64 "x%" PRId64 ", expected %" PRId64 "x%" PRId64,
                backward.rows(), backward.cols(), forward.cols(), forward.rows());
  const TransposedPattern want = transposePattern(forward.pattern);
  const CsrPattern &wp = want.pattern, &bp = backward.pattern;
  for (int64_t k = 0; k < wp.rows; ++k) {
    int64_t i = wp.rowPtr[k], j = bp.rowPtr[k];
    const int64_t iEnd = wp.rowPtr[k + 1], jEnd = bp.rowPtr[k + 1];
    for (; i < iEnd || j < jEnd; ++i, ++j) {
      const int64_t nWant = i < iEnd ? wp.colIdx[i] : INT64_MAX;
      const int64_t nHave = j < jEnd ? bp.colIdx[j] : INT64_MAX;
      if (nWant < nHave)
        return Status::error("weight " + weightName(nWant, k) +
                             " is in the forward view but not in the transposed view");
      if (nHave < nWant)
        return Status::error("weight " + weightName(nHave, k) +
                             " is in the transposed view but not in the forward view");
      const float a = forward.values[want.forwardIndex[i]], b = backward.values[j];
      if (std::memcmp(&a, &b, sizeof a) != 0)
        return Status::error("weight " + weightName(nWant, k) + ": forward value " +
                             std::to_string(a) + ", transposed value " + std::to_string(b));
    }
  }
  return {};
}

//===-- Gradients in mask order --------------------------------------------===//

Result<std::vector<float>> packMaskOrder(const std::vector<float> &dense,
                                         const CsrPattern &mask) {
  Result<CsrMatrix> m = gatherMasked(dense, mask);
  if (!m)
    return m.status();
  return std::move(m.value().values);
}

Result<std::vector<float>> scatterMaskOrder(const std::vector<float> &packed,
                                            const CsrPattern &mask) {
  if (Status s = validate(mask); !s)
    return s;
  if (static_cast<int64_t>(packed.size()) != mask.nnz())
    return fail("gradient stream holds %zu values, the mask %" PRId64 " entries", packed.size(),
                mask.nnz());
  return toDense(CsrMatrix{mask, packed});
}

//===-- The stream ----------------------------------------------------------===//

MaskStream encodeMask(const CsrPattern &pattern) { return encodeIndex(pattern, nullptr, nullptr); }

CsrStream encodeStream(const CsrMatrix &m) {
  std::vector<uint16_t> half(m.values.size());
  rt::floatsToHalf(m.values.data(), half.data(), half.size());
  CsrStream s;
  s.index = encodeIndex(m.pattern, half.data(), &s.values);
  return s;
}

Result<CsrPattern> decodeMask(const MaskStream &stream) {
  return decodePattern(stream, nullptr, nullptr);
}

Result<CsrMatrix> decodeStream(const CsrStream &s) {
  if (s.values.size() != s.index.deltas.size())
    return fail("stream holds %zu values for %zu entries", s.values.size(),
                s.index.deltas.size());
  std::vector<int64_t> positions;
  Result<CsrPattern> p = decodePattern(s.index, s.values.data(), &positions);
  if (!p)
    return p.status();
  CsrMatrix m{std::move(p.value()), std::vector<float>(positions.size())};
  for (size_t e = 0; e < positions.size(); ++e)
    m.values[e] = rt::halfBitsToFloat(s.values[positions[e]]);
  return m;
}

Result<std::vector<float>> decodeToDense(const CsrStream &stream) {
  Result<CsrMatrix> m = decodeStream(stream);
  if (!m)
    return m.status();
  try {
    return toDense(m.value());
  } catch (const std::exception &) { // bad_alloc, length_error
    return fail("out of memory: the dense %" PRId64 "x%" PRId64 " matrix", stream.rows(),
                stream.cols());
  }
}

int64_t fillerCount(const CsrPattern &p) {
  int64_t fillers = 0;
  for (int64_t r = 0; r < p.rows; ++r) {
    int64_t base = 0;
    for (int64_t e = p.rowPtr[r]; e < p.rowPtr[r + 1]; ++e) {
      fillers += (p.colIdx[e] - base) / kFillerStep;
      base = p.colIdx[e];
    }
  }
  return fillers;
}

StreamBytes streamBytes(const MaskStream &s) {
  return {0, 2 * s.entries(), kRowCountBytes * s.rows};
}

StreamBytes streamBytes(const CsrStream &s) {
  StreamBytes b = streamBytes(s.index);
  b.values = 2 * static_cast<int64_t>(s.values.size());
  return b;
}

StreamBytes predictStreamBytes(const CsrPattern &p) {
  const int64_t entries = p.nnz() + fillerCount(p);
  return {2 * entries, 2 * entries, kRowCountBytes * p.rows};
}

StreamBytes withValueBytes(StreamBytes fp16, int64_t valueBytes) {
  fp16.values = fp16.values / 2 * valueBytes;
  return fp16;
}

int64_t denseStreamBytes(int64_t rows, int64_t cols) { return 2 * rows * cols; }

int64_t gradientStreamBytes(const CsrPattern &mask) { return 4 * mask.nnz(); }

int64_t gradientRequestBytes(const CsrPattern &mask) {
  const int64_t entries = mask.rows * mask.cols;
  if (mask.nnz() == entries)
    return 0;
  const StreamBytes stream = predictStreamBytes(mask);
  return std::min(stream.indices + stream.rowCounts, (entries + 7) / 8);
}

Status checkTransposed(const CsrStream &forward, const CsrStream &backward) {
  Result<CsrMatrix> f = decodeStream(forward);
  if (!f)
    return Status::error("forward stream: " + f.error());
  Result<CsrMatrix> b = decodeStream(backward);
  if (!b)
    return Status::error("backward stream: " + b.error());
  return checkTransposed(f.value(), b.value());
}

//===-- Serialization ------------------------------------------------------===//

std::vector<uint8_t> serialize(const CsrStream &s) {
  std::vector<uint8_t> out;
  out.reserve(kSerializedHeaderBytes + static_cast<size_t>(streamBytes(s).total()));
  out.insert(out.end(), kMagic, kMagic + 4);
  putU32(out, static_cast<uint32_t>(s.rows()));
  putU32(out, static_cast<uint32_t>(s.cols()));
  const uint64_t entries = static_cast<uint64_t>(s.entries());
  putU32(out, static_cast<uint32_t>(entries));
  putU32(out, static_cast<uint32_t>(entries >> 32));
  size_t e = 0;
  for (uint32_t n : s.index.rowCounts) {
    putU32(out, n);
    for (uint32_t j = 0; j < n; ++j, ++e) {
      putU16(out, s.values[e]);
      putU16(out, s.index.deltas[e]);
    }
  }
  return out;
}

Result<CsrStream> deserialize(const uint8_t *data, size_t size) {
  auto error = [](const Status &s) { return Status::error("csr stream: " + s.message()); };
  if (size < kSerializedHeaderBytes)
    return error(fail("%zu bytes, shorter than the %zu-byte header", size,
                      kSerializedHeaderBytes));
  if (std::memcmp(data, kMagic, 4) != 0)
    return error(fail("bad magic (not a WCSR stream)"));
  CsrStream s;
  s.index.rows = static_cast<int64_t>(getLE(data + 4, 4));
  s.index.cols = static_cast<int64_t>(getLE(data + 8, 4));
  const uint64_t entries = getLE(data + 12, 8);
  if (Status st = checkDims(s.rows(), s.cols()); !st)
    return error(st);
  const size_t body = size - kSerializedHeaderBytes;
  // Each row needs 4 bytes and each entry 4: refuse before allocating.
  if (uint64_t(s.rows()) > body / 4 || entries > (body - 4 * uint64_t(s.rows())) / 4)
    return error(fail("truncated: the header declares %" PRId64 " rows and %" PRIu64
                      " entries (%" PRIu64 " bytes) but %zu bytes follow",
                      s.rows(), entries, 4 * (uint64_t(s.rows()) + entries), body));
  s.index.rowCounts.reserve(static_cast<size_t>(s.rows()));
  s.index.deltas.reserve(static_cast<size_t>(entries));
  s.values.reserve(static_cast<size_t>(entries));
  const uint8_t *p = data + kSerializedHeaderBytes, *end = data + size;
  for (int64_t r = 0; r < s.rows(); ++r) {
    if (end - p < 4)
      return error(fail("truncated in the entry count of row %" PRId64, r));
    const uint32_t n = static_cast<uint32_t>(getLE(p, 4));
    p += 4;
    if (uint64_t(end - p) < 4 * uint64_t(n))
      return error(fail("truncated in row %" PRId64 ": %" PRIu32
                        " entries need %" PRIu64 " bytes, %td left",
                        r, n, 4 * uint64_t(n), end - p));
    if (s.index.deltas.size() + n > entries)
      return error(fail("row %" PRId64 " holds more entries than the header's %" PRIu64, r,
                        entries));
    s.index.rowCounts.push_back(n);
    for (uint32_t j = 0; j < n; ++j, p += 4) {
      s.values.push_back(static_cast<uint16_t>(getLE(p, 2)));
      s.index.deltas.push_back(static_cast<uint16_t>(getLE(p + 2, 2)));
    }
  }
  if (s.index.deltas.size() != entries)
    return error(fail("the header declares %" PRIu64 " entries, the rows hold %zu", entries,
                      s.index.deltas.size()));
  if (p != end)
    return error(fail("%td trailing bytes after the last row", end - p));
  if (Status st = walkStream(s.index, s.values.data(), [](int64_t, int64_t, int64_t) {}); !st)
    return error(st);
  return s;
}

} // namespace wsc::sparse
