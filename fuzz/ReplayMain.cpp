//===- ReplayMain.cpp - Runs saved inputs through a fuzz target ---------===//
//
// The main of every <target>-replay: calls the target's
// LLVMFuzzerTestOneInput once per file named, or per regular file under a
// directory named (sorted, so runs are repeatable). Built by every
// compiler, without libFuzzer, so the committed corpus and regression
// inputs run on every build. A missing or empty argument is an error (a
// replay of nothing must not pass), except those after `--optional`: a
// target's regression directory exists once a crash has been found.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

static bool collect(const std::string &arg, bool optional, std::vector<fs::path> &files) {
  std::error_code ec;
  if (fs::is_regular_file(arg, ec)) {
    files.push_back(arg);
    return true;
  }
  if (optional && !fs::exists(arg, ec))
    return true;
  if (!fs::is_directory(arg, ec)) {
    std::fprintf(stderr, "replay: error: %s is neither a file nor a directory\n", arg.c_str());
    return false;
  }
  size_t before = files.size();
  for (const auto &entry : fs::recursive_directory_iterator(arg))
    if (entry.is_regular_file())
      files.push_back(entry.path());
  if (files.size() == before) {
    std::fprintf(stderr, "replay: error: %s holds no inputs\n", arg.c_str());
    return false;
  }
  std::sort(files.begin() + before, files.end());
  return true;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE|DIR... [--optional FILE|DIR...]\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> files;
  bool optional = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--optional")
      optional = true;
    else if (!collect(argv[i], optional, files))
      return 1;
  }
  if (files.empty()) {
    std::fprintf(stderr, "replay: error: no inputs\n");
    return 1;
  }
  for (const fs::path &file : files) {
    std::ifstream in(file, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    if (!in.eof() && in.fail()) {
      std::fprintf(stderr, "replay: error: cannot read %s\n", file.c_str());
      return 1;
    }
    // What libFuzzer would print first if this input crashed.
    std::fprintf(stderr, "replay: %s\n", file.c_str());
    // libFuzzer never passes a null pointer, even for an empty input.
    static const uint8_t empty = 0;
    LLVMFuzzerTestOneInput(bytes.empty() ? &empty : bytes.data(), bytes.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return 0;
}
