//===- FuzzSupport.h - What the fuzz targets share -------------*- C++ -*-===//
//
// Files the targets start from (committed schedules, read once), a private
// scratch directory for the targets whose code under test takes a path,
// and a byte reader that lets the fuzzer's input choose among options.
// Header-only: each target is one .cpp plus this.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_FUZZ_FUZZSUPPORT_H
#define WSC_FUZZ_FUZZSUPPORT_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <unistd.h>

namespace wsc::fuzz {

/// A file of the source tree (the committed inputs), read whole. The
/// targets are run in the tree they were built from.
inline std::string readSourceFile(const std::string &relative) {
  const std::string path = std::string(WSC_SOURCE_DIR) + "/" + relative;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz: cannot read %s\n", path.c_str());
    std::abort();
  }
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void writeBytes(const std::string &path, const void *data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char *>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
}

/// This process's own directory for the files the code under test reads
/// and writes, in /dev/shm when there is one (the checkpoint writer's
/// fsyncs cost nothing on tmpfs), removed at exit.
class ScratchDir {
public:
  ScratchDir() {
    std::error_code ec;
    std::string base = std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : "/tmp";
    if (const char *tmp = std::getenv("WSC_FUZZ_TMPDIR"))
      base = tmp;
    std::string pattern = base + "/wsc-fuzz-XXXXXX";
    if (!mkdtemp(pattern.data())) {
      std::perror("fuzz: mkdtemp");
      std::abort();
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

/// Reads the fuzzer's bytes front to back as choices; past the end every
/// read gives 0, so any input is a complete set of choices.
class ByteReader {
public:
  ByteReader(const uint8_t *data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v = (v << 8) | byte();
    return v;
  }
  /// A choice in [0, n), n > 0.
  uint32_t below(uint32_t n) { return n <= 256 ? byte() % n : u32() % n; }

private:
  const uint8_t *data_;
  size_t size_, pos_ = 0;
};

} // namespace wsc::fuzz

#endif // WSC_FUZZ_FUZZSUPPORT_H
