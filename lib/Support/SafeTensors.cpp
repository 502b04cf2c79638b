//===- SafeTensors.cpp - Read and write .safetensors files ----------------===//

#include "wsc/Support/SafeTensors.h"

#include "wsc/Support/JsonReader.h"
#include "wsc/Support/Error.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace wsc::rt {

using nlohmann::json;

namespace {

// Headers of real files are kilobytes; anything this large is corruption.
constexpr uint64_t kMaxHeaderBytes = 100u * 1024 * 1024;

struct FileDType {
  const char *name;
  size_t bytes;
};

constexpr FileDType kFileDTypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2},
    {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},    {"U32", 4},     {"F32", 4},
    {"I64", 8},  {"U64", 8}, {"F64", 8}};

const FileDType *findFileDType(const std::string &name) {
  for (const FileDType &d : kFileDTypes)
    if (name == d.name)
      return &d;
  return nullptr;
}

template <typename T> T load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

/// Converts raw little-endian bytes of `dt` into a runtime tensor; `where`
/// ("FILE: tensor 'name'") starts its error messages.
Tensor convert(const std::string &dt, const uint8_t *p, const Shape &shape,
               const std::string &where) {
  const int64_t n = numElements(shape);
  auto ints = [&](auto elem) {
    using T = decltype(elem);
    Tensor t = Tensor::uninitialized(DType::I64, shape);
    int64_t *d = t.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      T v = load<T>(p + i * sizeof(T));
      if constexpr (std::is_same_v<T, uint64_t>)
        if (v > static_cast<uint64_t>(INT64_MAX))
          fail(where, ": U64 element ", i, " does not fit in i64");
      d[i] = static_cast<int64_t>(v);
    }
    return t;
  };
  if (dt == "F32") {
    Tensor t = Tensor::uninitialized(DType::F32, shape);
    if (n)
      std::memcpy(t.rawData(), p, n * 4);
    return t;
  }
  if (dt == "F16" || dt == "BF16") {
    Tensor t = Tensor::uninitialized(dt == "F16" ? DType::F16 : DType::BF16, shape);
    float *d = t.data<float>();
    std::vector<uint16_t> bits(n);
    if (n)
      std::memcpy(bits.data(), p, n * 2);
    if (dt == "F16")
      halfToFloats(bits.data(), d, n);
    else
      for (int64_t i = 0; i < n; ++i)
        d[i] = bf16BitsToFloat(bits[i]);
    return t;
  }
  if (dt == "F64") {
    Tensor t = Tensor::uninitialized(DType::F32, shape);
    float *d = t.data<float>();
    for (int64_t i = 0; i < n; ++i)
      d[i] = static_cast<float>(load<double>(p + i * 8));
    return t;
  }
  if (dt == "BOOL") {
    Tensor t = Tensor::uninitialized(DType::I1, shape);
    uint8_t *d = t.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i)
      d[i] = p[i] != 0;
    return t;
  }
  if (dt == "I64") return ints(int64_t());
  if (dt == "U64") return ints(uint64_t());
  if (dt == "I32") return ints(int32_t());
  if (dt == "U32") return ints(uint32_t());
  if (dt == "I16") return ints(int16_t());
  if (dt == "U16") return ints(uint16_t());
  if (dt == "I8") return ints(int8_t());
  if (dt == "U8") return ints(uint8_t());
  fail(where, ": dtype ", dt, " is not supported by the runtime");
}

/// A header's tensors (checked against its data buffer) and metadata.
struct Header {
  std::map<std::string, SafeTensorEntry> entries;
  std::map<std::string, std::string> metadata;
  std::vector<std::string> order;
};

/// Reads the 8-byte header length of a file of `size` bytes; checks it.
uint64_t headerLength(const uint8_t *first8, uint64_t size, const std::string &source) {
  if (size < 8)
    fail(source, ": truncated safetensors file (", size,
         " bytes, shorter than the 8-byte header length)");
  const uint64_t n = load<uint64_t>(first8);
  if (n > kMaxHeaderBytes)
    fail(source, ": corrupt safetensors file: header length ", n, " is absurd");
  if (n > size - 8)
    fail(source, ": truncated safetensors file: header length ", n, " but only ", size - 8,
         " bytes follow");
  if (n < 2)
    fail(source, ": corrupt safetensors file: header of ", n, " bytes");
  return n;
}

Header parseHeader(const uint8_t *text, uint64_t n, uint64_t bufferSize,
                   const std::string &source) {
  json header;
  try {
    header = json::parse(text, text + n);
  } catch (const json::exception &e) {
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos && msg[0] == '[')
      msg = msg.substr(p + 2);
    fail(source, ": corrupt safetensors header: ", msg);
  }
  const std::string &where = source;
  JsonReader root(header, "", where);
  if (!root.isObject())
    root.error("safetensors header is not a JSON object");

  Header out;
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string &name = it.key();
    if (name == "__metadata__") {
      JsonReader md(*it, "__metadata__", where);
      md.requireObject();
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string())
          JsonReader(*m, "__metadata__." + m.key(), where).error("metadata values must be strings");
        out.metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    JsonReader t(*it, "tensor '" + name + "'", where);
    t.requireObject();
    JsonReader dtj = t.at("dtype");
    std::string dt = dtj.asString();
    const FileDType *fd = findFileDType(dt);
    if (!fd)
      dtj.error("unknown dtype '", dt, "'");
    JsonReader sh = t.at("shape");
    sh.requireArray();
    Shape shape;
    for (size_t i = 0; i < sh.size(); ++i)
      shape.push_back(sh[i].asIntIn(0, int64_t(1) << 40));
    int64_t numel = 0;
    try {
      numel = numElements(shape);
    } catch (const Error &e) {
      sh.error(e.what());
    }
    JsonReader off = t.at("data_offsets");
    off.requireArray();
    if (off.size() != 2)
      off.error("expected [begin, end]");
    const int64_t b = off[0].asIntIn(0, INT64_MAX), e = off[1].asIntIn(0, INT64_MAX);
    if (e < b)
      off.error("end ", e, " is before begin ", b);
    if (static_cast<uint64_t>(e) > bufferSize)
      off.error("byte range [", b, ", ", e, ") lies outside the ", bufferSize,
                "-byte data buffer (truncated file?)");
    const uint64_t expect = static_cast<uint64_t>(numel) * fd->bytes;
    if (static_cast<uint64_t>(e - b) != expect)
      off.error("holds ", e - b, " bytes but ", dt, " ", shapeToString(shape), " needs ", expect);
    ranges.push_back({static_cast<uint64_t>(b), static_cast<uint64_t>(e), name});
    out.entries[name] = SafeTensorEntry{dt, shape, 8 + n + uint64_t(b), expect};
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range &x, const Range &y) {
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  uint64_t pos = 0;
  for (const Range &r : ranges) {
    if (r.begin < pos)
      fail(source, ": corrupt safetensors file: tensor '", r.name, "' overlaps another tensor");
    if (r.begin > pos)
      fail(source, ": corrupt safetensors file: unused bytes [", pos, ", ", r.begin,
           ") before tensor '", r.name, "'");
    pos = r.end;
    out.order.push_back(r.name);
  }
  if (pos != bufferSize)
    fail(source, ": corrupt safetensors file: ", bufferSize - pos,
         " trailing bytes after the last tensor");
  return out;
}

std::string tensorWhere(const std::string &source, const std::string &name) {
  return source + ": tensor '" + name + "'";
}

/// Opens `path` for reading into `in`; returns its size in bytes.
uint64_t openFile(std::ifstream &in, const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    fail(path, ": is a directory, not a safetensors file");
  in.open(path, std::ios::binary);
  if (!in)
    fail(path, ": cannot open file");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0)
    fail(path, ": cannot determine the file size");
  in.seekg(0);
  return static_cast<uint64_t>(size);
}

} // namespace

size_t SafeTensorEntry::elementBytes() const { return findFileDType(fileDType)->bytes; }

SafeTensorsFile parseSafeTensors(const uint8_t *data, size_t size, const std::string &source) {
  const uint64_t n = headerLength(data, size, source);
  Header header = parseHeader(data + 8, n, size - 8 - n, source);
  SafeTensorsFile file;
  file.metadata = std::move(header.metadata);
  file.order = std::move(header.order);
  for (const auto &[name, e] : header.entries)
    file.tensors[name] =
        SafeTensor{convert(e.fileDType, data + e.fileOffset, e.shape, tensorWhere(source, name)),
                   e.fileDType, e.fileOffset};
  return file;
}

SafeTensorsReader::SafeTensorsReader(const std::string &path) : path_(path) {
  const uint64_t size = openFile(in_, path);
  uint8_t first8[8] = {};
  readAt(0, first8, std::min<uint64_t>(8, size));
  const uint64_t n = headerLength(first8, size, path);
  std::vector<uint8_t> text(n);
  readAt(8, text.data(), n);
  Header header = parseHeader(text.data(), n, size - 8 - n, path);
  entries_ = std::move(header.entries);
  metadata_ = std::move(header.metadata);
  order_ = std::move(header.order);
}

void SafeTensorsReader::readAt(uint64_t offset, uint8_t *out, uint64_t bytes) {
  if (bytes == 0)
    return;
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(offset));
  if (!in_.read(reinterpret_cast<char *>(out), static_cast<std::streamsize>(bytes)))
    fail(path_, ": read error at byte ", offset, " (was the file changed?)");
  bytesRead_ += bytes;
}

const SafeTensorEntry &SafeTensorsReader::entry(const std::string &name) const {
  auto it = entries_.find(name);
  if (it == entries_.end())
    fail(path_, ": missing tensor '", name, "'");
  return it->second;
}

Tensor SafeTensorsReader::readElements(const std::string &name, int64_t first,
                                       const Shape &shape) {
  const SafeTensorEntry &e = entry(name);
  const int64_t count = numElements(shape);
  const int64_t total = numElements(e.shape);
  if (first < 0 || count > total - first)
    fail("internal: elements [", first, ", ", first + count, ") of ", tensorWhere(path_, name),
         " of ", total, " elements");
  const size_t width = e.elementBytes();
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * width);
  readAt(e.fileOffset + static_cast<uint64_t>(first) * width, bytes.data(), bytes.size());
  return convert(e.fileDType, bytes.data(), shape, tensorWhere(path_, name));
}

SafeTensorsFile readSafeTensors(const std::string &path) {
  std::ifstream in;
  const uint64_t size = openFile(in, path);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char *>(bytes.data()), static_cast<std::streamsize>(size)))
    fail(path, ": read error");
  return parseSafeTensors(bytes.data(), bytes.size(), path);
}

namespace {

struct Encoded {
  const char *dtype;
  size_t elemBytes;
};

Encoded encodingOf(DType t) {
  switch (t) {
  case DType::F32: return {"F32", 4};
  case DType::F16: return {"F16", 2};
  case DType::BF16: return {"BF16", 2};
  case DType::I64:
  case DType::Index: return {"I64", 8};
  case DType::I1: return {"BOOL", 1};
  }
  return {"F32", 4};
}

void encode(const Tensor &t, uint8_t *out) {
  const int64_t n = t.numel();
  switch (t.dtype()) {
  case DType::F16: {
    std::vector<uint16_t> bits(n);
    floatsToHalf(t.data<float>(), bits.data(), n);
    if (n)
      std::memcpy(out, bits.data(), n * 2);
    return;
  }
  case DType::BF16:
    for (int64_t i = 0; i < n; ++i) {
      uint16_t b = floatToBF16Bits(t.data<float>()[i]);
      std::memcpy(out + 2 * i, &b, 2);
    }
    return;
  default:
    if (n)
      std::memcpy(out, t.rawData(), t.byteSize());
  }
}

} // namespace

std::vector<uint8_t> serializeSafeTensors(const std::map<std::string, Tensor> &tensors,
                                          const std::map<std::string, std::string> &metadata) {
  std::vector<std::pair<std::string, const Tensor *>> order;
  for (const auto &[name, t] : tensors) {
    if (name == "__metadata__")
      fail("cannot write a tensor called '__metadata__'");
    order.push_back({name, &t});
  }
  // Larger elements first: each tensor then starts at a multiple of its
  // element size without padding (the format allows no holes).
  std::stable_sort(order.begin(), order.end(), [](const auto &a, const auto &b) {
    return encodingOf(a.second->dtype()).elemBytes > encodingOf(b.second->dtype()).elemBytes;
  });
  json header = json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto &[name, t] : order) {
    Encoded enc = encodingOf(t->dtype());
    uint64_t bytes = static_cast<uint64_t>(t->numel()) * enc.elemBytes;
    header[name] = {{"dtype", enc.dtype}, {"shape", t->shape()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  // Pad with spaces so the data buffer starts 8-byte aligned.
  while ((8 + text.size()) % 8 != 0)
    text.push_back(' ');
  std::vector<uint8_t> out(8 + text.size() + offset);
  const uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, text.data(), text.size());
  uint8_t *p = out.data() + 8 + text.size();
  for (const auto &[name, t] : order) {
    encode(*t, p);
    p += t->numel() * encodingOf(t->dtype()).elemBytes;
  }
  return out;
}

void writeSafeTensors(const std::string &path, const std::map<std::string, Tensor> &tensors,
                      const std::map<std::string, std::string> &metadata) {
  std::vector<uint8_t> bytes = serializeSafeTensors(tensors, metadata);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    fail(path, ": cannot open for writing");
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    fail(path, ": write error");
}

} // namespace wsc::rt
