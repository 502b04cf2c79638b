//===- CheckpointFile.cpp - Checksummed, atomically written checkpoints ---===//
//
// The file layer of Checkpoint.h: XXH64, the streaming atomic writer, the
// verifying reader, and the checkpoint directory (step files, `latest`,
// pruning, the newest complete checkpoint).
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Checkpoint.h"

#include "wsc/Support/Error.h"
#include "wsc/Support/SafeTensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace wsc::rt {

namespace fs = std::filesystem;
using nlohmann::json;

//===-- XXH64 ---------------------------------------------------------------===//

namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL, kP2 = 0xC2B2AE3D27D4EB4FULL,
                   kP3 = 0x165667B19E3779F9ULL, kP4 = 0x85EBCA77C2B2AE63ULL,
                   kP5 = 0x27D4EB2F165667C5ULL;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t read64(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8); // little-endian hosts only, like the safetensors code
  return v;
}
inline uint32_t read32(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t round64(uint64_t acc, uint64_t input) {
  return rotl(acc + input * kP2, 31) * kP1;
}
inline uint64_t mergeRound(uint64_t acc, uint64_t v) {
  return (acc ^ round64(0, v)) * kP1 + kP4;
}

} // namespace

Hash64::Hash64(uint64_t seed) : seed_(seed) {
  acc_[0] = seed + kP1 + kP2;
  acc_[1] = seed + kP2;
  acc_[2] = seed;
  acc_[3] = seed - kP1;
}

void Hash64::consumeStripe(const uint8_t *p) {
  for (int lane = 0; lane < 4; ++lane)
    acc_[lane] = round64(acc_[lane], read64(p + 8 * lane));
}

void Hash64::update(const void *data, size_t size) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  total_ += size;
  if (pendingSize_ > 0) {
    const size_t take = std::min(size, 32 - pendingSize_);
    std::memcpy(pending_ + pendingSize_, p, take);
    pendingSize_ += take;
    p += take;
    size -= take;
    if (pendingSize_ < 32)
      return;
    consumeStripe(pending_);
    pendingSize_ = 0;
  }
  for (; size >= 32; p += 32, size -= 32)
    consumeStripe(p);
  std::memcpy(pending_, p, size);
  pendingSize_ = size;
}

uint64_t Hash64::digest() const {
  uint64_t h;
  if (total_ >= 32) {
    h = rotl(acc_[0], 1) + rotl(acc_[1], 7) + rotl(acc_[2], 12) + rotl(acc_[3], 18);
    for (uint64_t a : acc_)
      h = mergeRound(h, a);
  } else {
    h = seed_ + kP5;
  }
  h += total_;
  const uint8_t *p = pending_;
  size_t n = pendingSize_;
  for (; n >= 8; p += 8, n -= 8)
    h = rotl(h ^ round64(0, read64(p)), 27) * kP1 + kP4;
  if (n >= 4) {
    h = rotl(h ^ (uint64_t(read32(p)) * kP1), 23) * kP2 + kP3;
    p += 4;
    n -= 4;
  }
  for (; n > 0; ++p, --n)
    h = rotl(h ^ (*p * kP5), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

uint64_t hash64(const void *data, size_t size, uint64_t seed) {
  Hash64 h(seed);
  h.update(data, size);
  return h.digest();
}

std::string hashHex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

//===-- Writing ---------------------------------------------------------------===//

namespace {

constexpr const char *kChecksumsKey = "checksums";
constexpr const char *kMetadataChecksumKey = "metadata_checksum";
// Checksums are written after the data, into a header of the same length.
const std::string kPlaceholderHash(16, '0');

/// The hash of the metadata entries other than its own checksum, in key order.
uint64_t metadataHash(const std::map<std::string, std::string> &metadata) {
  Hash64 h;
  for (const auto &[key, value] : metadata) {
    if (key == kMetadataChecksumKey)
      continue;
    h.update(key.data(), key.size() + 1); // with the terminating NUL: unambiguous
    h.update(value.data(), value.size() + 1);
  }
  return h.digest();
}

const char *fileDTypeOf(const Tensor &t, const std::string &name) {
  switch (t.storage()) {
  case Storage::F32: return "F32";
  case Storage::I64: return "I64";
  case Storage::U8: return "BOOL";
  }
  fail("checkpoint tensor '", name, "' has an unsupported dtype");
}

/// A file descriptor closed on scope exit, with errors naming its path.
class File {
public:
  File(const std::string &path, int flags) : path_(path) {
    fd_ = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd_ < 0)
      fail(path, ": cannot open: ", std::strerror(errno));
  }
  ~File() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  File(const File &) = delete;
  File &operator=(const File &) = delete;

  /// Writes all of `data`, at the file position or, given, at `offset`.
  void writeAll(const void *data, size_t size, std::optional<off_t> offset = std::nullopt) {
    const char *p = static_cast<const char *>(data);
    while (size > 0) {
      const ssize_t n = offset ? ::pwrite(fd_, p, size, *offset) : ::write(fd_, p, size);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        fail(path_, ": write error: ", std::strerror(errno));
      p += n;
      size -= static_cast<size_t>(n);
      if (offset)
        *offset += n;
    }
  }
  void sync() {
    if (::fsync(fd_) != 0)
      fail(path_, ": fsync failed: ", std::strerror(errno));
  }
  void close() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0)
      fail(path_, ": close failed: ", std::strerror(errno));
  }

private:
  std::string path_;
  int fd_ = -1;
};

std::string directoryOf(const std::string &path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

/// fsync of the directory, so that a rename in it survives a crash.
void syncDirectory(const std::string &dir) {
  File d(dir, O_RDONLY | O_DIRECTORY);
  d.sync();
}

std::string tempPathFor(const std::string &path) {
  const fs::path p(path);
  return (fs::path(directoryOf(path)) /
          ("." + p.filename().string() + ".tmp." + std::to_string(::getpid())))
      .string();
}

/// Writes the file's bytes with `writeBody` into a temp file, then renames.
template <typename WriteBody> void replaceAtomically(const std::string &path, WriteBody writeBody) {
  const std::string temp = tempPathFor(path);
  try {
    File out(temp, O_WRONLY | O_CREAT | O_TRUNC);
    writeBody(out);
    out.sync();
    out.close();
  } catch (const Error &e) {
    ::unlink(temp.c_str());
    fail(path, ": cannot write: ", e.what());
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(path, ": cannot rename the temp file into place: ", std::strerror(err));
  }
  syncDirectory(directoryOf(path));
}

} // namespace

void writeFileAtomically(const std::string &path, const std::string &text) {
  replaceAtomically(path, [&](File &out) { out.writeAll(text.data(), text.size()); });
}

void writeCheckpointFile(const std::string &path, const CheckpointContents &contents) {
  // Layout: 8-byte header length, the JSON header padded with spaces to a
  // multiple of 8, then the tensors by decreasing element size (each
  // naturally aligned, no holes), as serializeSafeTensors lays them out.
  std::vector<std::pair<const std::string *, const Tensor *>> order;
  for (const auto &[name, t] : contents.tensors) {
    if (name == "__metadata__")
      fail(path, ": cannot write a tensor called '__metadata__'");
    fileDTypeOf(t, name);
    order.push_back({&name, &t});
  }
  std::stable_sort(order.begin(), order.end(), [](const auto &a, const auto &b) {
    return storageBytes(a.second->storage()) > storageBytes(b.second->storage());
  });
  for (const auto &[key, value] : contents.metadata)
    if (key == kChecksumsKey || key == kMetadataChecksumKey)
      fail(path, ": metadata key '", key, "' is reserved for the checksums");

  auto headerFor = [&](const json &checksums, const std::string &metadataChecksum) {
    std::map<std::string, std::string> metadata = contents.metadata;
    metadata[kChecksumsKey] = checksums.dump();
    metadata[kMetadataChecksumKey] =
        metadataChecksum.empty() ? hashHex(metadataHash(metadata)) : metadataChecksum;
    json header = json::object();
    header["__metadata__"] = metadata;
    uint64_t offset = 0;
    for (const auto &[name, t] : order) {
      const uint64_t bytes = t->byteSize();
      header[*name] = {{"dtype", fileDTypeOf(*t, *name)},
                       {"shape", t->shape()},
                       {"data_offsets", {offset, offset + bytes}}};
      offset += bytes;
    }
    std::string text = header.dump();
    while ((8 + text.size()) % 8 != 0)
      text.push_back(' ');
    return text;
  };
  json placeholders = json::object();
  for (const auto &[name, t] : order)
    placeholders[*name] = kPlaceholderHash;
  const std::string draft = headerFor(placeholders, kPlaceholderHash);

  replaceAtomically(path, [&](File &out) {
    const uint64_t headerSize = draft.size();
    out.writeAll(&headerSize, 8);
    out.writeAll(draft.data(), draft.size());
    // Each tensor is hashed a chunk at a time just before the chunk is
    // written, so its bytes are read from memory once.
    constexpr size_t kChunk = size_t(4) << 20;
    json checksums = json::object();
    for (const auto &[name, t] : order) {
      const uint8_t *p = static_cast<const uint8_t *>(t->rawData());
      Hash64 h;
      for (size_t left = t->byteSize(); left > 0;) {
        const size_t n = std::min(left, kChunk);
        h.update(p, n);
        out.writeAll(p, n);
        p += n;
        left -= n;
      }
      checksums[*name] = hashHex(h.digest());
    }
    const std::string final = headerFor(checksums, "");
    if (final.size() != draft.size())
      fail("internal: ", path, ": the checkpoint header changed size");
    out.writeAll(final.data(), final.size(), 8);
  });
}

//===-- Reading ---------------------------------------------------------------===//

namespace {

std::vector<uint8_t> readWholeFile(const std::string &path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    fail(path, ": is a directory, not a checkpoint file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    const int err = errno;
    if (fd >= 0)
      ::close(fd);
    fail(path, ": cannot read: ", std::strerror(err));
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      fail(path, ": read error: ", n == 0 ? "unexpected end of file" : std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return bytes;
}

} // namespace

CheckpointContents readCheckpointFile(const std::string &path) {
  const std::vector<uint8_t> bytes = readWholeFile(path);
  // The structure first: a truncated file or broken header fails here.
  SafeTensorsFile file = parseSafeTensors(bytes.data(), bytes.size(), path);
  std::map<std::string, std::string> &md = file.metadata;
  auto format = md.find("format");
  if (format == md.end() || format->second != "wsc-checkpoint")
    fail(path, ": not a wsc checkpoint (its __metadata__ has no format \"wsc-checkpoint\"; a "
               "--save-weights file holds weights only)");
  auto version = md.find("format_version");
  if (version == md.end() || version->second != std::to_string(kCheckpointFormatVersion))
    fail(path, ": checkpoint format version ",
         version == md.end() ? std::string("(none)") : "'" + version->second + "'",
         " is not the version this wsc reads (", kCheckpointFormatVersion, ")");
  auto stored = md.find(kMetadataChecksumKey);
  if (stored == md.end())
    fail(path, ": corrupt checkpoint: __metadata__ has no ", kMetadataChecksumKey);
  if (stored->second != hashHex(metadataHash(md)))
    fail(path, ": corrupt checkpoint: the __metadata__ checksum does not match its contents");
  json checksums;
  try {
    checksums = json::parse(md.at(kChecksumsKey));
  } catch (const std::exception &) {
    fail(path, ": corrupt checkpoint: __metadata__.", kChecksumsKey, " is missing or not JSON");
  }
  if (!checksums.is_object())
    fail(path, ": corrupt checkpoint: __metadata__.", kChecksumsKey, " is not an object");

  // The data offsets of each tensor, from the header parseSafeTensors has
  // already validated.
  uint64_t headerSize;
  std::memcpy(&headerSize, bytes.data(), 8);
  const json header = json::parse(bytes.begin() + 8, bytes.begin() + 8 + headerSize);
  const uint8_t *data = bytes.data() + 8 + headerSize;
  for (const auto &[name, t] : file.tensors) {
    auto want = checksums.find(name);
    if (want == checksums.end() || !want->is_string())
      fail(path, ": corrupt checkpoint: tensor '", name, "' has no checksum");
    const json &offsets = header.at(name).at("data_offsets");
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (hashHex(hash64(data + begin, end - begin)) != want->get<std::string>())
      fail(path, ": corrupt checkpoint: the data of tensor '", name,
           "' does not match its checksum");
    if (t.fileDType != "F32" && t.fileDType != "I64" && t.fileDType != "BOOL")
      fail(path, ": tensor '", name, "' has dtype ", t.fileDType,
           "; a checkpoint holds F32, I64 and BOOL only");
  }
  for (auto it = checksums.begin(); it != checksums.end(); ++it)
    if (!file.tensors.count(it.key()))
      fail(path, ": corrupt checkpoint: tensor '", it.key(),
           "' has a checksum but is not in the file");
  CheckpointContents out;
  for (auto &[name, t] : file.tensors)
    out.tensors[name] = std::move(t.tensor);
  md.erase(kChecksumsKey);
  md.erase(kMetadataChecksumKey);
  out.metadata = std::move(md);
  return out;
}

//===-- The directory -----------------------------------------------------------===//

std::string checkpointFileName(int64_t step) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "step-%08lld.safetensors", static_cast<long long>(step));
  return buf;
}

std::optional<int64_t> checkpointStepOfName(const std::string &name) {
  const std::string prefix = "step-", suffix = ".safetensors";
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
    return std::nullopt;
  return std::stoll(digits);
}

namespace {

/// The checkpoints in `dir`, by ascending step.
std::vector<std::pair<int64_t, std::string>> listCheckpoints(const std::string &dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec))
    if (auto step = checkpointStepOfName(e.path().filename().string()))
      found.push_back({*step, e.path().string()});
  if (ec)
    fail(dir, ": cannot list the checkpoint directory: ", ec.message());
  std::sort(found.begin(), found.end());
  return found;
}

} // namespace

std::string writeCheckpointToDir(const std::string &dir, int64_t step,
                                 const CheckpointContents &contents, int keep) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir))
    fail(dir, ": cannot create the checkpoint directory", ec ? ": " + ec.message() : "");
  const std::string name = checkpointFileName(step);
  const std::string path = (fs::path(dir) / name).string();
  writeCheckpointFile(path, contents);
  // Written last: whoever follows `latest` finds a complete checkpoint.
  writeFileAtomically((fs::path(dir) / "latest").string(), name + "\n");
  std::vector<std::pair<int64_t, std::string>> all = listCheckpoints(dir);
  // Newer checkpoints belong to a run resumed here from an older one and
  // abandoned: the newest must be this run's, for --resume to find it.
  while (!all.empty() && all.back().first > step) {
    fs::remove(all.back().second, ec);
    all.pop_back();
  }
  if (keep > 0)
    for (size_t i = 0; i + static_cast<size_t>(keep) < all.size(); ++i)
      fs::remove(all[i].second, ec);
  // A writer killed mid-write leaves its temp file ("." name ".tmp." pid).
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(".step-", 0) == 0 && n.find(".safetensors.tmp.") != std::string::npos)
      fs::remove(e.path(), ec);
  }
  return path;
}

ResumePoint findResumePoint(const std::string &where) {
  std::error_code ec;
  if (!fs::exists(where, ec))
    fail(where, ": no such checkpoint file or directory");
  if (!fs::is_directory(where, ec))
    return {where, readCheckpointFile(where)};
  const std::vector<std::pair<int64_t, std::string>> all = listCheckpoints(where);
  if (all.empty())
    fail(where, ": no checkpoint (step-*.safetensors) to resume from");
  const std::string &newest = all.back().second;
  try {
    return {newest, readCheckpointFile(newest)};
  } catch (const Error &e) {
    // Never fall back silently: say which one is usable and let the user
    // choose it.
    for (size_t i = all.size() - 1; i-- > 0;) {
      try {
        readCheckpointFile(all[i].second);
      } catch (const Error &) {
        continue;
      }
      fail(e.what(), "\n", where, ": the newest checkpoint is unusable; the previous complete "
           "one is ", all[i].second, " (step ", all[i].first, "): resume from it with --resume ",
           all[i].second);
    }
    fail(e.what(), "\n", where, ": the newest checkpoint is unusable and no earlier one is "
         "complete");
  }
}

} // namespace wsc::rt
