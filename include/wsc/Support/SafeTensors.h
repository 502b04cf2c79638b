//===- SafeTensors.h - Read and write .safetensors files ---------*- C++ -*-===//
//
// Format: an 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
//    "__metadata__": {"key": "value"}}
// then the data buffer the offsets index. The reader trusts nothing: it
// checks the header length against the file, every field's type, that each
// tensor's byte range lies in the buffer, matches dtype x shape, and that the
// ranges neither overlap nor leave holes. Float tensors (F32/F16/BF16/F64)
// are returned in f32 storage, integer ones in i64, BOOL as i1; `fileDType`
// keeps what the file said so callers can insist on a type.
//
// SafeTensorsReader reads and checks the header alone, then reads parts of
// tensors on request (an MPI rank reads only its samples of each batch).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SUPPORT_SAFETENSORS_H
#define WSC_SUPPORT_SAFETENSORS_H

#include "wsc/Support/Tensor.h"

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace wsc::rt {

struct SafeTensor {
  Tensor tensor;
  std::string fileDType; // "F32", "I64", "F16", "BOOL", ...
  uint64_t fileOffset = 0; // where its bytes start in the file
};

struct SafeTensorsFile {
  std::map<std::string, SafeTensor> tensors;
  std::map<std::string, std::string> metadata;
  std::vector<std::string> order; // tensor names in file (offset) order
};

/// A tensor's header entry: its type and shape, and where its bytes lie.
struct SafeTensorEntry {
  std::string fileDType;
  Shape shape;
  uint64_t fileOffset = 0; // where its bytes start in the file
  uint64_t byteSize = 0;
  size_t elementBytes() const;
};

/// A file whose header is read and checked at construction, exactly as
/// readSafeTensors checks it (every entry's byte range against the file's
/// size), and whose tensor data is read only in the parts asked for.
class SafeTensorsReader {
public:
  explicit SafeTensorsReader(const std::string &path);
  const std::string &path() const { return path_; }
  const std::map<std::string, SafeTensorEntry> &entries() const { return entries_; }
  const std::map<std::string, std::string> &metadata() const { return metadata_; }
  const std::vector<std::string> &order() const { return order_; }
  /// Throws, naming the file, unless the file holds `name`.
  const SafeTensorEntry &entry(const std::string &name) const;
  /// Elements [first, first + numElements(shape)) of tensor `name` in
  /// row-major order, converted as readSafeTensors converts, as a tensor of
  /// `shape`: a block of rows of dim 0 when `first` is a multiple of a row.
  /// Reads those bytes only.
  Tensor readElements(const std::string &name, int64_t first, const Shape &shape);
  /// Bytes read from the file so far, the header included.
  uint64_t bytesRead() const { return bytesRead_; }

private:
  void readAt(uint64_t offset, uint8_t *out, uint64_t bytes);

  std::string path_;
  std::ifstream in_;
  std::map<std::string, SafeTensorEntry> entries_;
  std::map<std::string, std::string> metadata_;
  std::vector<std::string> order_;
  uint64_t bytesRead_ = 0;
};

/// Parses an in-memory file; `source` prefixes error messages.
SafeTensorsFile parseSafeTensors(const uint8_t *data, size_t size, const std::string &source);
SafeTensorsFile readSafeTensors(const std::string &path);

/// Serializes tensors (f32 -> F32, f16 -> F16, bf16 -> BF16, i64/index -> I64,
/// i1 -> BOOL). Tensors are laid out by decreasing alignment so every one is
/// naturally aligned, with the header padded to a multiple of 8 bytes.
std::vector<uint8_t> serializeSafeTensors(const std::map<std::string, Tensor> &tensors,
                                          const std::map<std::string, std::string> &metadata = {});
void writeSafeTensors(const std::string &path, const std::map<std::string, Tensor> &tensors,
                      const std::map<std::string, std::string> &metadata = {});

} // namespace wsc::rt

#endif // WSC_SUPPORT_SAFETENSORS_H
