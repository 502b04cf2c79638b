//===- RobustnessTest.cpp - Corrupt inputs never crash ----------------------===//
//
// Random corruptions of a valid schedule and a valid safetensors file: the
// readers must either accept the input or throw wsc::rt::Error, never crash
// or throw anything else. (Run under WSC_SANITIZE=ON to catch memory errors.)
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Interpreter.h"
#include "wsc/Support/SafeTensors.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <random>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

/// Visits every node of `j` and returns pointers to all of them.
void collect(json &j, std::vector<json *> &out) {
  out.push_back(&j);
  if (j.is_structured())
    for (auto &child : j)
      collect(child, out);
}

TEST(Robustness, MutatedSchedulesThrowOnlyErrors) {
  const json base = json::parse(std::ifstream(inputPath("mlp_ce_s2.json")));
  const std::vector<json> replacements = {nullptr, -1, 0, 1, 3, 1e30, "x", "f16", json::array(),
                                          json::object(), true, json::array({0, 1})};
  std::mt19937 gen(1234);
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 600; ++iter) {
    json doc = base;
    std::vector<json *> nodes;
    collect(doc, nodes);
    const int edits = 1 + static_cast<int>(gen() % 3);
    for (int e = 0; e < edits; ++e) {
      json *n = nodes[gen() % nodes.size()];
      if (n == &doc)
        continue;
      *n = replacements[gen() % replacements.size()];
      nodes.clear();
      collect(doc, nodes);
    }
    try {
      Schedule s = parseSchedule(doc.dump(), "fuzz.json");
      Interpreter interp(s);
      ++accepted;
    } catch (const Error &) {
      ++rejected;
    } catch (const std::exception &ex) {
      FAIL() << "non-Error exception: " << ex.what() << "\n" << doc.dump();
    }
  }
  EXPECT_GT(rejected, 300);
  EXPECT_GT(accepted, 0);
}

TEST(Robustness, TruncatedAndFlippedScheduleText) {
  const std::string text = json::parse(std::ifstream(inputPath("linear_mse_s1.json"))).dump();
  std::mt19937 gen(99);
  for (int iter = 0; iter < 300; ++iter) {
    std::string t = text;
    if (iter % 2)
      t.resize(gen() % t.size());
    else
      for (int k = 0; k < 3; ++k)
        t[gen() % t.size()] = static_cast<char>(gen() % 256);
    try {
      Schedule s = parseSchedule(t, "fuzz.json");
      Interpreter interp(s);
    } catch (const Error &) {
    } catch (const std::exception &ex) {
      FAIL() << "non-Error exception: " << ex.what();
    }
  }
}

TEST(Robustness, CorruptSafeTensors) {
  std::vector<uint8_t> good = serializeSafeTensors(
      {{"a", randomTensor({3, 4}, 1)}, {"b", Tensor::fromInts({5}, {1, 2, 3, 4, 5})},
       {"c", Tensor::fromInts({2}, {1, 0}, DType::I1)}},
      {{"k", "v"}});
  std::mt19937 gen(7);
  int rejected = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    std::vector<uint8_t> bytes = good;
    switch (iter % 3) {
    case 0:
      bytes.resize(gen() % bytes.size());
      break;
    case 1:
      for (int k = 0; k < 1 + static_cast<int>(gen() % 4); ++k)
        bytes[gen() % bytes.size()] = static_cast<uint8_t>(gen());
      break;
    default:
      bytes[gen() % 8] = static_cast<uint8_t>(gen()); // the header length
    }
    try {
      parseSafeTensors(bytes.data(), bytes.size(), "fuzz.safetensors");
    } catch (const Error &) {
      ++rejected;
    } catch (const std::exception &ex) {
      FAIL() << "non-Error exception: " << ex.what();
    }
  }
  EXPECT_GT(rejected, 1000);
}

} // namespace
