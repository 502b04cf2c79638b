//===- Tensor.h - A dense, contiguous, row-major tensor ----------*- C++ -*-===//
//
// A Tensor is a dtype, a shape and a shared, 64-byte aligned buffer. Copies
// are shallow (they share the buffer) so reshapes and broadcasts to several
// systems cost nothing. Convention: a buffer shared by more than one Tensor is
// never written; code that wants to write in place checks isUnique() first
// (copy-on-write), which keeps tensors value-semantic like MLIR's.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SUPPORT_TENSOR_H
#define WSC_SUPPORT_TENSOR_H

#include "wsc/Support/DType.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace wsc::rt {

using Shape = std::vector<int64_t>;

/// Number of elements; throws Error if negative or absurdly large.
int64_t numElements(const Shape &shape);
std::string shapeToString(const Shape &shape);
/// Row-major strides (in elements).
std::vector<int64_t> rowMajorStrides(const Shape &shape);

class Tensor {
public:
  Tensor() = default;

  /// Zero-filled tensor.
  static Tensor zeros(DType dtype, const Shape &shape);
  /// Contents unspecified: for results that are fully overwritten.
  static Tensor uninitialized(DType dtype, const Shape &shape);
  static Tensor fromFloats(const Shape &shape, const std::vector<float> &data,
                           DType dtype = DType::F32);
  static Tensor fromInts(const Shape &shape, const std::vector<int64_t> &data,
                         DType dtype = DType::I64);
  static Tensor scalar(float v) { return fromFloats({}, {v}); }

  bool defined() const { return buffer_ != nullptr; }
  DType dtype() const { return dtype_; }
  Storage storage() const { return storageOf(dtype_); }
  const Shape &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t byteSize() const { return static_cast<size_t>(numel_) * storageBytes(storage()); }

  void *rawData() { return buffer_.get(); }
  const void *rawData() const { return buffer_.get(); }
  /// Typed access; throws Error if the storage does not hold T.
  template <typename T> T *data();
  template <typename T> const T *data() const;

  /// Same buffer, new shape (row-major reshape). Element counts must match.
  Tensor reshaped(const Shape &shape) const;
  /// Same buffer, dtype relabelled within the same storage class.
  Tensor withDType(DType dtype) const;
  /// Elements [offset, offset + numElements(shape)) of this tensor's buffer
  /// as a tensor of `shape`, sharing the buffer (it counts as a holder for
  /// isUnique()).
  Tensor view(int64_t offset, const Shape &shape) const;
  /// Deep copy.
  Tensor clone() const;
  /// True if no other Tensor shares this buffer, so writing is safe.
  bool isUnique() const { return buffer_.use_count() == 1; }

  /// Element i as double (any storage); for tests and diagnostics.
  double at(int64_t i) const;
  std::vector<float> toFloats() const;
  std::vector<int64_t> toInts() const;

private:
  Tensor(DType dtype, Shape shape, std::shared_ptr<uint8_t> buffer, int64_t n)
      : dtype_(dtype), shape_(std::move(shape)), numel_(n),
        buffer_(std::move(buffer)) {}

  DType dtype_ = DType::F32;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<uint8_t> buffer_;
};

template <typename T> constexpr Storage storageFor();
template <> constexpr Storage storageFor<float>() { return Storage::F32; }
template <> constexpr Storage storageFor<int64_t>() { return Storage::I64; }
template <> constexpr Storage storageFor<uint8_t>() { return Storage::U8; }

[[noreturn]] void throwStorageMismatch(DType have, Storage want);

template <typename T> T *Tensor::data() {
  if (storage() != storageFor<T>())
    throwStorageMismatch(dtype_, storageFor<T>());
  return reinterpret_cast<T *>(buffer_.get());
}
template <typename T> const T *Tensor::data() const {
  if (storage() != storageFor<T>())
    throwStorageMismatch(dtype_, storageFor<T>());
  return reinterpret_cast<const T *>(buffer_.get());
}

/// 2-D transpose (blocked for cache friendliness).
Tensor transpose2D(const Tensor &t);
/// Rows [rowBegin, rowEnd) of 2-D `t` into the matching columns of `out`
/// (shape [cols, rows], same dtype): transpose2D a band at a time, so the
/// runtime can run bands on threads.
void transposeRows(const Tensor &t, Tensor &out, int64_t rowBegin, int64_t rowEnd);

/// Rows [begin, end) along dimension `dim`.
Tensor sliceDim(const Tensor &t, int dim, int64_t begin, int64_t end);
/// Concatenation along `dim`; all other dims must agree.
Tensor concatDim(const std::vector<Tensor> &parts, int dim);

} // namespace wsc::rt

#endif // WSC_SUPPORT_TENSOR_H
