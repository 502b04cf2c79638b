//===- ScheduleJsonTest.cpp - The schedule written as it is made -----------===//
//
// wsc-translate writes a schedule's steps and values element by element
// (ArrayText) under a root it writes with sorted keys (writeObject). The
// bytes must be those of the whole tree written by formatv("{0:2}"), which
// the schedule was before and which every reader expects.
//
//===----------------------------------------------------------------------===//

#include "ScheduleJson.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir::wsc;
namespace json = llvm::json;

namespace {

json::Object element(int64_t i) {
  return json::Object{{"id", i},
                      {"shape", json::Array{2, i}},
                      {"layout", json::Object{{"x", json::Array{"b"}}, {"y", json::Array{}}}},
                      {"name", "v" + std::to_string(i)}};
}

/// The tree written whole, as the emitter did before.
std::string whole(json::Object root, std::vector<std::pair<std::string, int>> arrays) {
  for (auto &[key, count] : arrays) {
    json::Array a;
    for (int i = 0; i < count; ++i)
      a.push_back(element(i));
    root[key] = std::move(a);
  }
  return llvm::formatv("{0:2}", json::Value(std::move(root))).str() + "\n";
}

/// The same tree with the arrays streamed.
std::string streamed(const json::Object &root, std::vector<std::pair<std::string, int>> arrays) {
  std::vector<std::unique_ptr<ArrayText>> texts;
  std::vector<std::pair<llvm::StringRef, llvm::StringRef>> parts;
  for (auto &[key, count] : arrays) {
    texts.push_back(std::make_unique<ArrayText>());
    for (int i = 0; i < count; ++i)
      texts.back()->push_back(element(i));
    EXPECT_EQ(texts.back()->size(), size_t(count));
    parts.push_back({key, texts.back()->finish()});
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  writeObject(os, root, parts);
  os.flush();
  return out;
}

json::Object root() {
  // Keys before, between and after the arrays' in sorted order.
  return json::Object{{"format", "wsc-schedule"},
                      {"report", json::Object{{"b", 1}, {"a", json::Array{1.5, nullptr}}}},
                      {"target", json::Object{{"pe_x", 3}}},
                      {"zeta", true}};
}

TEST(ScheduleJson, StreamedArraysWriteTheBytesOfTheWholeTree) {
  for (int steps : {0, 1, 3})
    for (int values : {0, 2}) {
      std::vector<std::pair<std::string, int>> arrays = {{"steps", steps}, {"values", values}};
      EXPECT_EQ(streamed(root(), arrays), whole(root(), arrays))
          << steps << " steps, " << values << " values";
    }
}

// finish() may be called again (the destructor does, for an array an
// error left unfinished): the text stays the array's.
TEST(ScheduleJson, FinishIsIdempotent) {
  ArrayText text;
  text.push_back(element(0));
  text.push_back(element(1));
  std::string first = text.finish().str();
  EXPECT_EQ(text.finish().str(), first);
  EXPECT_EQ(first.front(), '[');
  EXPECT_EQ(first.back(), ']');
  EXPECT_NE(first.find("\"name\": \"v1\""), std::string::npos);
}

} // namespace
