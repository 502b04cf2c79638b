//===- Csr.h - Sparsity masks, FP32 CSR and the CSR weight stream -*- C++ -*-===//
//
// The plain-C++ pieces of unstructured weight sparsity (docs/Sparsity.md):
//
//  - CsrPattern: a sparsity mask in CSR (row pointers + sorted columns);
//  - CsrMatrix:  a pattern with FP32 values, for the emulator's arithmetic;
//  - MaskStream / CsrStream: the wire format MemoryX streams to the wafer
//    (whitepaper §7.4): per row a 32-bit entry count, per entry a 16-bit
//    column delta and (weight streams only) an FP16 value;
//  - the transposed view (CSR of W^T, i.e. CSC of W) for the backward pass,
//    and a consistency check between the two views;
//  - gradients in mask order (the order of the mask's entries, row-major).
//
// Column deltas: an entry's column is the previous entry's column in the same
// row (0 for the first entry) plus its delta. A real entry's delta is at most
// kMaxDelta = 65534; the delta value kFillerDelta = 65535 marks a *filler*:
// a zero-valued entry that only advances the column by 65535 and is not part
// of the mask. Gaps wider than 65534 are bridged by as many fillers as needed.
//
// Nothing here throws: fallible calls return a Status or a Result<T> that
// carries a one-line message. Calls that take a pattern or matrix without
// returning a Status (encode*, transpose*, toDense, toMask, fillerCount,
// gatherMasked from a pointer) expect a valid one (validate()); everything
// this library builds or decodes is.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SPARSE_CSR_H
#define WSC_SPARSE_CSR_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wsc::sparse {

//===-- Status and Result ---------------------------------------------------===//

/// Success, or a one-line error message.
class Status {
public:
  Status() = default;
  static Status error(std::string message) {
    Status s;
    s.message_ = message.empty() ? std::string("unknown error") : std::move(message);
    return s;
  }
  bool ok() const { return message_.empty(); }
  explicit operator bool() const { return ok(); }
  const std::string &message() const { return message_; }

private:
  std::string message_;
};

/// A value or an error message.
template <typename T> class Result {
public:
  Result(T value) : value_(std::move(value)) {}
  /// `status` must be an error.
  Result(Status status) : status_(std::move(status)) {
    if (status_.ok())
      status_ = Status::error("Result built from a success status without a value");
  }
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const T &value() const & { return *value_; }
  T &value() & { return *value_; }
  T &&value() && { return std::move(*value_); }
  const Status &status() const { return status_; }
  const std::string &error() const { return status_.message(); }

private:
  std::optional<T> value_;
  Status status_;
};

//===-- Patterns and FP32 CSR ----------------------------------------------===//

/// Largest rows or cols of a matrix (indices are int32 in CsrPattern, and the
/// serialized header stores u32).
constexpr int64_t kMaxDim = 0x7fffffff;

/// A sparsity mask in CSR: the entries of row r are colIdx[rowPtr[r] ..
/// rowPtr[r+1]), strictly increasing. An entry may hold the value 0 (a masked
/// weight that is currently zero, e.g. just regrown): the pattern, not the
/// value, decides what is in the mask.
struct CsrPattern {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> rowPtr{0}; // rows + 1 offsets
  std::vector<int32_t> colIdx;    // nnz columns

  int64_t nnz() const { return static_cast<int64_t>(colIdx.size()); }
  /// nnz / (rows * cols); 0 for an empty matrix.
  double density() const;
  bool operator==(const CsrPattern &o) const {
    return rows == o.rows && cols == o.cols && rowPtr == o.rowPtr && colIdx == o.colIdx;
  }
  bool operator!=(const CsrPattern &o) const { return !(*this == o); }
};

/// A pattern with one FP32 value per entry.
struct CsrMatrix {
  CsrPattern pattern;
  std::vector<float> values; // nnz, in pattern order

  int64_t rows() const { return pattern.rows; }
  int64_t cols() const { return pattern.cols; }
  int64_t nnz() const { return pattern.nnz(); }
};

/// Checks the invariants: dims in [0, kMaxDim], rowPtr of size rows + 1 from
/// 0 to nnz and non-decreasing, columns in range and strictly increasing per
/// row.
Status validate(const CsrPattern &pattern);
/// validate(pattern) and one value per entry.
Status validate(const CsrMatrix &matrix);

/// The pattern of a row-major `rows x cols` byte mask (non-zero = kept).
/// `mask.size()` must be rows * cols.
Result<CsrPattern> patternFromMask(const std::vector<uint8_t> &mask, int64_t rows,
                                   int64_t cols);
/// The pattern of the non-zeros of a row-major FP32 matrix (x != 0: -0.0 is
/// zero, NaN is a non-zero).
Result<CsrPattern> patternFromDense(const std::vector<float> &dense, int64_t rows,
                                    int64_t cols);
/// The row-major byte mask (1 = in the pattern).
std::vector<uint8_t> toMask(const CsrPattern &pattern);

/// The CSR of a dense row-major matrix restricted to `pattern` (the working
/// copy of a masked weight). `dense.size()` must be rows * cols.
Result<CsrMatrix> gatherMasked(const std::vector<float> &dense, const CsrPattern &pattern);
/// Same, from a raw buffer of pattern.rows * pattern.cols floats (unchecked).
CsrMatrix gatherMasked(const float *dense, const CsrPattern &pattern);
/// Row-major dense matrix with zeros off the pattern.
std::vector<float> toDense(const CsrMatrix &matrix);

//===-- Transposed view -----------------------------------------------------===//

/// The pattern of W^T (i.e. W in CSC), plus for each of its entries the index
/// of the same weight in W's (forward) entry order, so that one copy of the
/// values serves both views (whitepaper §7.4).
struct TransposedPattern {
  CsrPattern pattern;               // cols x rows
  std::vector<int64_t> forwardIndex; // nnz: entry e of W^T is entry forwardIndex[e] of W
};

/// The transposed pattern (a counting sort by column, O(nnz + rows + cols)).
TransposedPattern transposePattern(const CsrPattern &forward);
/// Values of the transposed view gathered from the forward values:
/// out[e] = forwardValues[t.forwardIndex[e]]. `out` holds t.pattern.nnz().
void gatherTransposedValues(const TransposedPattern &t, const float *forwardValues,
                            float *out);
/// W^T in CSR (same non-zero set, same values).
CsrMatrix transposed(const CsrMatrix &forward);
/// Whether `backward` is exactly the transposed view of `forward`: swapped
/// dims, the same entries and bitwise the same values. The error names the
/// first difference.
Status checkTransposed(const CsrMatrix &forward, const CsrMatrix &backward);
/// Whether `t` is the transposed pattern of `forward` (pattern and
/// forwardIndex).
Status checkTransposed(const CsrPattern &forward, const TransposedPattern &t);

//===-- Gradients in mask order --------------------------------------------===//

/// The entries of a dense row-major gradient that `mask` selects, in mask
/// order (row-major CSR order): what the wafer sends back, FP32, one value per
/// entry of the mask stream (fillers excluded). `dense.size()` must be
/// rows * cols.
Result<std::vector<float>> packMaskOrder(const std::vector<float> &dense,
                                         const CsrPattern &mask);
/// The inverse: a dense row-major gradient, zero off the mask.
/// `packed.size()` must be mask.nnz().
Result<std::vector<float>> scatterMaskOrder(const std::vector<float> &packed,
                                            const CsrPattern &mask);

//===-- The stream ----------------------------------------------------------===//

/// Largest delta of a real entry.
constexpr uint16_t kMaxDelta = 0xfffe;
/// The delta that marks a filler (advances the column by 65535, value 0).
constexpr uint16_t kFillerDelta = 0xffff;
/// Bytes of a per-row entry count.
constexpr int64_t kRowCountBytes = 4;

/// The index component: the gradient-request mask MemoryX sends in the
/// backward pass has exactly this form (whitepaper §7.4).
struct MaskStream {
  int64_t rows = 0, cols = 0;
  std::vector<uint32_t> rowCounts; // rows: entries per row, fillers included
  std::vector<uint16_t> deltas;    // one per entry, fillers included

  int64_t entries() const { return static_cast<int64_t>(deltas.size()); }
  bool operator==(const MaskStream &o) const {
    return rows == o.rows && cols == o.cols && rowCounts == o.rowCounts && deltas == o.deltas;
  }
};

/// A weight stream: the index component and one FP16 value (IEEE half bits)
/// per entry; fillers carry +0 (0x0000).
struct CsrStream {
  MaskStream index;
  std::vector<uint16_t> values;

  int64_t rows() const { return index.rows; }
  int64_t cols() const { return index.cols; }
  int64_t entries() const { return index.entries(); }
  bool operator==(const CsrStream &o) const { return index == o.index && values == o.values; }
};

/// What a stream costs on the wire. The shape is known from the schedule, so
/// the serialized header is not counted.
struct StreamBytes {
  int64_t values = 0;    // 2 B per entry, fillers included (0 for a mask stream)
  int64_t indices = 0;   // 2 B per entry, fillers included
  int64_t rowCounts = 0; // kRowCountBytes per row

  int64_t payload() const { return values + indices; }
  int64_t total() const { return values + indices + rowCounts; }
  StreamBytes &operator+=(const StreamBytes &o) {
    values += o.values;
    indices += o.indices;
    rowCounts += o.rowCounts;
    return *this;
  }
};

/// The mask stream of a pattern (deltas with fillers).
MaskStream encodeMask(const CsrPattern &pattern);
/// The weight stream: values rounded to FP16 (round to nearest even).
CsrStream encodeStream(const CsrMatrix &matrix);
/// Validates and decodes a mask stream (fillers dropped).
Result<CsrPattern> decodeMask(const MaskStream &stream);
/// Validates and decodes a weight stream to FP32 CSR (fillers dropped; an
/// entry whose value is 0 stays an entry).
Result<CsrMatrix> decodeStream(const CsrStream &stream);
/// Validates and decodes a weight stream to a dense row-major FP32 matrix.
Result<std::vector<float>> decodeToDense(const CsrStream &stream);

/// Number of fillers `pattern`'s stream needs.
int64_t fillerCount(const CsrPattern &pattern);
StreamBytes streamBytes(const MaskStream &stream);
StreamBytes streamBytes(const CsrStream &stream);
/// The bytes of encodeStream(pattern with values), without encoding.
StreamBytes predictStreamBytes(const CsrPattern &pattern);
/// `fp16` (bytes of a stream with FP16 values) with `valueBytes` per value
/// instead: a stream's values travel in the stream dtype.
StreamBytes withValueBytes(StreamBytes fp16, int64_t valueBytes);
/// A dense FP16 stream: 2 * rows * cols.
int64_t denseStreamBytes(int64_t rows, int64_t cols);
/// The FP32 gradient stream in mask order: 4 B per mask entry.
int64_t gradientStreamBytes(const CsrPattern &mask);
/// Sending `mask` as a gradient request to systems that do not hold it: 0
/// for every entry (the gradient streams dense), else the smaller of its
/// mask stream (16-bit deltas with fillers, row counts) and a bitmap.
int64_t gradientRequestBytes(const CsrPattern &mask);

/// Both streams are valid and `backward` is the transposed view of `forward`.
Status checkTransposed(const CsrStream &forward, const CsrStream &backward);

//===-- Serialization ------------------------------------------------------===//

/// Bytes of the serialized header: "WCSR", u32 rows, u32 cols, u64 entries.
constexpr size_t kSerializedHeaderBytes = 20;

/// Little-endian bytes: the header, then per row its u32 count followed by
/// count x (u16 FP16 value, u16 delta). Size: kSerializedHeaderBytes +
/// streamBytes(stream).total().
std::vector<uint8_t> serialize(const CsrStream &stream);
/// Parses and validates serialized bytes (truncation, trailing bytes, counts,
/// columns, fillers): the result always decodes.
Result<CsrStream> deserialize(const uint8_t *data, size_t size);
inline Result<CsrStream> deserialize(const std::vector<uint8_t> &bytes) {
  return deserialize(bytes.data(), bytes.size());
}

} // namespace wsc::sparse

#endif // WSC_SPARSE_CSR_H
