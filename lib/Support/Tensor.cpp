//===- Tensor.cpp - Dense row-major tensors -------------------------------===//

#include "wsc/Support/Tensor.h"
#include "wsc/Support/Error.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

#include <sys/mman.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace wsc::rt {

// Shapes may describe more than fits in memory (a shapes-only GPT-3 schedule
// for wsc-run --model-only); 2^56 keeps byte counts far from overflow. A
// tensor the emulator allocates must stay under 2^36 elements.
static constexpr int64_t kMaxElements = int64_t(1) << 56;
static constexpr int64_t kMaxAllocElements = int64_t(1) << 36;

static int64_t allocElements(const Shape &shape) {
  const int64_t n = numElements(shape);
  if (n > kMaxAllocElements)
    fail("tensor of shape ", shapeToString(shape), " is too large for the emulator (",
         n, " elements); use wsc-run --model-only for timing without numerics");
  return n;
}

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      fail("negative dimension in shape ", shapeToString(shape));
    if (d != 0 && n > kMaxElements / d)
      fail("shape ", shapeToString(shape), " has too many elements");
    n *= d;
  }
  return n;
}

std::string shapeToString(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<int64_t> rowMajorStrides(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

void throwStorageMismatch(DType have, Storage want) {
  const char *w = want == Storage::F32 ? "f32" : want == Storage::I64 ? "i64" : "i1";
  fail("internal: tensor of dtype ", dtypeName(have), " accessed as ", w);
}

namespace {

/// Keeps freed large buffers for reuse. A training step allocates the same
/// activation and weight sizes every time; reusing them avoids the page
/// faults of fresh mmap'ed memory (several ms per step for a 1024-wide MLP).
class BufferCache {
public:
  static constexpr size_t kMinBytes = 256 * 1024;
  static constexpr size_t kMaxCachedBytes = size_t(512) << 20;

  void *take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(bytes);
    if (it == free_.end() || it->second.empty())
      return nullptr;
    void *p = it->second.back();
    it->second.pop_back();
    cached_ -= bytes;
    return p;
  }
  void give(void *p, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_ + bytes <= kMaxCachedBytes) {
        free_[bytes].push_back(p);
        cached_ += bytes;
        return;
      }
    }
    std::free(p);
  }
  ~BufferCache() {
    for (auto &[bytes, list] : free_)
      for (void *p : list)
        std::free(p);
  }

private:
  std::mutex mutex_;
  std::map<size_t, std::vector<void *>> free_;
  size_t cached_ = 0;
};

BufferCache &bufferCache() {
  // Leaked on purpose: tensors may be freed during static destruction.
  static BufferCache *cache = new BufferCache();
  return *cache;
}

} // namespace

/// `bytes` of fresh memory, 64-byte aligned, or null. A buffer of 2 MB or
/// more starts on a 2 MB boundary and asks for transparent huge pages over
/// its whole 2 MB pages: a BLAS call streaming a 4 MB weight matrix then
/// misses the TLB far less (about 5% of a 1024-wide MLP's step). Only
/// pages the buffer fills are advised, so the resident set does not grow.
static void *allocateAligned(size_t bytes) {
  constexpr size_t kHugePage = size_t(2) << 20;
  void *p = nullptr;
  if (bytes < kHugePage)
    return std::aligned_alloc(64, bytes);
  if (::posix_memalign(&p, kHugePage, bytes) != 0)
    return nullptr;
  ::madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE); // a hint: failure is fine
  return p;
}

static std::shared_ptr<uint8_t> allocate(size_t bytes, bool zero) {
  // 64-byte alignment suits AVX-512 loads and BLAS; round the size up as
  // aligned_alloc requires a multiple of the alignment.
  const size_t padded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  const bool cacheable = padded >= BufferCache::kMinBytes;
  void *p = cacheable ? bufferCache().take(padded) : nullptr;
  if (!p)
    p = allocateAligned(padded);
  if (!p)
    throw std::bad_alloc();
  if (zero)
    std::memset(p, 0, padded);
  if (cacheable)
    return std::shared_ptr<uint8_t>(static_cast<uint8_t *>(p), [padded](uint8_t *q) {
      bufferCache().give(q, padded);
    });
  return std::shared_ptr<uint8_t>(static_cast<uint8_t *>(p), [](uint8_t *q) { std::free(q); });
}

Tensor Tensor::zeros(DType dtype, const Shape &shape) {
  int64_t n = allocElements(shape);
  return Tensor(dtype, shape, allocate(n * storageBytes(storageOf(dtype)), true), n);
}

Tensor Tensor::uninitialized(DType dtype, const Shape &shape) {
  int64_t n = allocElements(shape);
  return Tensor(dtype, shape, allocate(n * storageBytes(storageOf(dtype)), false), n);
}

Tensor Tensor::fromFloats(const Shape &shape, const std::vector<float> &data, DType dtype) {
  if (storageOf(dtype) != Storage::F32)
    fail("internal: fromFloats with dtype ", dtypeName(dtype));
  Tensor t = uninitialized(dtype, shape);
  if (static_cast<int64_t>(data.size()) != t.numel())
    fail("internal: ", data.size(), " floats for shape ", shapeToString(shape));
  std::copy(data.begin(), data.end(), t.data<float>());
  return t;
}

Tensor Tensor::fromInts(const Shape &shape, const std::vector<int64_t> &data, DType dtype) {
  Tensor t = uninitialized(dtype, shape);
  if (static_cast<int64_t>(data.size()) != t.numel())
    fail("internal: ", data.size(), " ints for shape ", shapeToString(shape));
  if (t.storage() == Storage::I64)
    std::copy(data.begin(), data.end(), t.data<int64_t>());
  else if (t.storage() == Storage::U8)
    for (size_t i = 0; i < data.size(); ++i)
      t.data<uint8_t>()[i] = data[i] & 1;
  else
    for (size_t i = 0; i < data.size(); ++i)
      t.data<float>()[i] = static_cast<float>(data[i]);
  return t;
}

Tensor Tensor::reshaped(const Shape &shape) const {
  int64_t n = numElements(shape);
  if (n != numel_)
    fail("cannot reshape ", shapeToString(shape_), " (", numel_, " elements) to ",
         shapeToString(shape), " (", n, " elements)");
  return Tensor(dtype_, shape, buffer_, n);
}

Tensor Tensor::withDType(DType dtype) const {
  if (storageOf(dtype) != storage())
    fail("internal: cannot relabel ", dtypeName(dtype_), " as ", dtypeName(dtype));
  return Tensor(dtype, shape_, buffer_, numel_);
}

Tensor Tensor::view(int64_t offset, const Shape &shape) const {
  const int64_t n = numElements(shape);
  if (!defined() || offset < 0 || offset > numel_ - n)
    fail("internal: view of ", n, " elements at ", offset, " of a tensor of ", numel_);
  // The aliasing constructor shares ownership, so the buffer outlives views.
  std::shared_ptr<uint8_t> at(buffer_, buffer_.get() + offset * storageBytes(storage()));
  return Tensor(dtype_, shape, std::move(at), n);
}

Tensor Tensor::clone() const {
  if (!defined())
    return Tensor();
  Tensor t = uninitialized(dtype_, shape_);
  std::memcpy(t.rawData(), rawData(), byteSize());
  return t;
}

double Tensor::at(int64_t i) const {
  if (i < 0 || i >= numel_)
    fail("internal: element ", i, " out of range for ", shapeToString(shape_));
  switch (storage()) {
  case Storage::F32: return data<float>()[i];
  case Storage::I64: return static_cast<double>(data<int64_t>()[i]);
  case Storage::U8: return data<uint8_t>()[i];
  }
  return 0;
}

std::vector<float> Tensor::toFloats() const {
  std::vector<float> v(numel_);
  for (int64_t i = 0; i < numel_; ++i)
    v[i] = static_cast<float>(at(i));
  return v;
}

std::vector<int64_t> Tensor::toInts() const {
  std::vector<int64_t> v(numel_);
  for (int64_t i = 0; i < numel_; ++i)
    v[i] = static_cast<int64_t>(at(i));
  return v;
}

#if defined(__x86_64__)
// Transposes one 8x8 tile of floats in registers.
__attribute__((target("avx"))) static inline void transposeTile8(const float *s, int64_t ls,
                                                                   float *d, int64_t ld) {
  __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ls), r2 = _mm256_loadu_ps(s + 2 * ls),
         r3 = _mm256_loadu_ps(s + 3 * ls), r4 = _mm256_loadu_ps(s + 4 * ls),
         r5 = _mm256_loadu_ps(s + 5 * ls), r6 = _mm256_loadu_ps(s + 6 * ls),
         r7 = _mm256_loadu_ps(s + 7 * ls);
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(d + ld, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(d + 2 * ld, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(d + 3 * ld, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(d + 4 * ld, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(d + 5 * ld, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(d + 6 * ld, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(d + 7 * ld, _mm256_permute2f128_ps(u3, u7, 0x31));
}

/// Rows [r0, r1) of s ([rows, cols]) into d ([cols, rows]).
__attribute__((target("avx"))) static void transposeFloatsAVX(const float *s, float *d,
                                                               int64_t rows, int64_t cols,
                                                               int64_t r0, int64_t r1) {
  // 64x64 blocks of 8x8 register tiles; the ragged edges go element-wise.
  constexpr int64_t B = 64;
  const int64_t rows8 = r0 + (r1 - r0) / 8 * 8, cols8 = cols / 8 * 8;
  for (int64_t i0 = r0; i0 < rows8; i0 += B)
    for (int64_t j0 = 0; j0 < cols8; j0 += B) {
      const int64_t i1 = std::min(rows8, i0 + B), j1 = std::min(cols8, j0 + B);
      for (int64_t i = i0; i < i1; i += 8)
        for (int64_t j = j0; j < j1; j += 8)
          transposeTile8(s + i * cols + j, cols, d + j * rows + i, rows);
    }
  for (int64_t i = r0; i < r1; ++i)
    for (int64_t j = (i < rows8 ? cols8 : 0); j < cols; ++j)
      d[j * rows + i] = s[i * cols + j];
}
#endif

Tensor transpose2D(const Tensor &t) {
  if (t.rank() != 2)
    fail("internal: transpose2D of a rank-", t.rank(), " tensor");
  Tensor out = Tensor::uninitialized(t.dtype(), {t.shape()[1], t.shape()[0]});
  transposeRows(t, out, 0, t.shape()[0]);
  return out;
}

void transposeRows(const Tensor &t, Tensor &out, int64_t rowBegin, int64_t rowEnd) {
  if (t.rank() != 2 || out.shape() != Shape{t.shape()[1], t.shape()[0]} ||
      out.storage() != t.storage() || rowBegin < 0 || rowEnd < rowBegin || rowEnd > t.shape()[0])
    fail("internal: transposeRows [", rowBegin, ", ", rowEnd, ") of ", shapeToString(t.shape()),
         " into ", shapeToString(out.shape()));
  const int64_t rows = t.shape()[0], cols = t.shape()[1];
  const size_t es = storageBytes(t.storage());
#if defined(__x86_64__)
  static const bool avx = __builtin_cpu_supports("avx");
  if (es == 4 && avx) {
    transposeFloatsAVX(t.data<float>(), out.data<float>(), rows, cols, rowBegin, rowEnd);
    return;
  }
#endif
  const uint8_t *src = static_cast<const uint8_t *>(t.rawData());
  uint8_t *dst = static_cast<uint8_t *>(out.rawData());
  // Blocks of 32x32 keep both the read and the write side in cache.
  constexpr int64_t B = 32;
  auto blockLoop = [&](auto elem) {
    using T = decltype(elem);
    const T *s = reinterpret_cast<const T *>(src);
    T *d = reinterpret_cast<T *>(dst);
    for (int64_t i0 = rowBegin; i0 < rowEnd; i0 += B)
      for (int64_t j0 = 0; j0 < cols; j0 += B) {
        const int64_t i1 = std::min(rowEnd, i0 + B), j1 = std::min(cols, j0 + B);
        for (int64_t j = j0; j < j1; ++j)
          for (int64_t i = i0; i < i1; ++i)
            d[j * rows + i] = s[i * cols + j];
      }
  };
  if (es == 4)
    blockLoop(float());
  else if (es == 8)
    blockLoop(int64_t());
  else
    blockLoop(uint8_t());
}

Tensor sliceDim(const Tensor &t, int dim, int64_t begin, int64_t end) {
  if (dim < 0 || dim >= t.rank() || begin < 0 || end < begin || end > t.shape()[dim])
    fail("internal: slice [", begin, ", ", end, ") of dim ", dim, " of ",
         shapeToString(t.shape()));
  Shape shape = t.shape();
  shape[dim] = end - begin;
  Tensor out = Tensor::uninitialized(t.dtype(), shape);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < dim; ++i)
    outer *= t.shape()[i];
  for (int64_t i = dim + 1; i < t.rank(); ++i)
    inner *= t.shape()[i];
  const size_t es = storageBytes(t.storage());
  const size_t rowBytes = static_cast<size_t>(inner) * es;
  const uint8_t *src = static_cast<const uint8_t *>(t.rawData());
  uint8_t *dst = static_cast<uint8_t *>(out.rawData());
  const size_t chunk = static_cast<size_t>(end - begin) * rowBytes;
  for (int64_t o = 0; o < outer; ++o)
    if (chunk)
      std::memcpy(dst + o * chunk,
                  src + (o * t.shape()[dim] + begin) * rowBytes, chunk);
  return out;
}

Tensor concatDim(const std::vector<Tensor> &parts, int dim) {
  if (parts.empty())
    fail("internal: concatenation of no tensors");
  Shape shape = parts[0].shape();
  if (dim < 0 || dim >= static_cast<int>(shape.size()))
    fail("internal: concatenation along dim ", dim, " of a rank-", shape.size(), " tensor");
  int64_t total = 0;
  for (const Tensor &p : parts) {
    Shape s = p.shape();
    if (s.size() != shape.size() || p.dtype() != parts[0].dtype())
      fail("internal: cannot concatenate ", shapeToString(s), " with ", shapeToString(shape));
    total += s[dim];
    s[dim] = shape[dim];
    if (s != shape)
      fail("internal: cannot concatenate ", shapeToString(p.shape()), " with ",
           shapeToString(parts[0].shape()), " along dim ", dim);
  }
  shape[dim] = total;
  Tensor out = Tensor::uninitialized(parts[0].dtype(), shape);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < dim; ++i)
    outer *= shape[i];
  for (size_t i = dim + 1; i < shape.size(); ++i)
    inner *= shape[i];
  const size_t es = storageBytes(out.storage());
  uint8_t *dst = static_cast<uint8_t *>(out.rawData());
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor &p : parts) {
      const size_t chunk = static_cast<size_t>(p.shape()[dim] * inner) * es;
      if (chunk)
        std::memcpy(dst, static_cast<const uint8_t *>(p.rawData()) + o * chunk, chunk);
      dst += chunk;
    }
  return out;
}

} // namespace wsc::rt
