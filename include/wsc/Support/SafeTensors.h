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
//===----------------------------------------------------------------------===//
#ifndef WSC_SUPPORT_SAFETENSORS_H
#define WSC_SUPPORT_SAFETENSORS_H

#include "wsc/Support/Tensor.h"

#include <cstdint>
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
