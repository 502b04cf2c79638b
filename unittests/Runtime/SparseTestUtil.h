//===- SparseTestUtil.h - Helpers of the sparse weight streaming tests -*- C++ -*-===//
//
// Random masks, weights and batches for sparse schedules, the dense twin of
// a sparse schedule, and lookups of its steps, shared by the Sparse*Test.cpp
// files.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_UNITTESTS_RUNTIME_SPARSETESTUTIL_H
#define WSC_UNITTESTS_RUNTIME_SPARSETESTUTIL_H

#include "wsc/Runtime/Session.h"
#include "wsc/Sparse/Csr.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace wsc::rt::test {

/// An i1 mask with exactly round(density * numel) active entries (at least
/// one), at random places.
inline Tensor exactMask(const Shape &shape, double density, uint32_t seed) {
  const int64_t n = numElements(shape);
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  std::vector<int64_t> bits(n, 0);
  const int64_t keep = std::max<int64_t>(1, std::llround(density * static_cast<double>(n)));
  for (int64_t i = 0; i < keep; ++i)
    bits[order[i]] = 1;
  return Tensor::fromInts(shape, bits, DType::I1);
}

inline sparse::CsrPattern patternOf(const Tensor &mask) {
  const uint8_t *m = mask.data<uint8_t>();
  return sparse::patternFromMask({m, m + mask.numel()}, mask.shape()[0], mask.shape()[1]).value();
}

/// The twin of a sparse schedule that streams everything dense (and only
/// masks, through ParamStore::setMask).
inline json denseTwin(json doc) {
  for (json &st : doc["steps"])
    st.erase("format");
  return doc;
}

inline std::unique_ptr<Session> sessionOf(const json &doc) {
  return std::make_unique<Session>(parseSchedule(doc.dump(), "test.json"));
}

struct Model {
  std::map<std::string, Tensor> weights, masks;
};

/// Random weights for every parameter and masks for the sparse ones.
inline Model randomModel(const Schedule &s, double density, uint32_t seed) {
  Model m;
  for (const ParamSpec &p : s.params) {
    m.weights[p.name] = randomTensor(p.shape, seed++, -0.5f, 0.5f);
    if (p.sparsity)
      m.masks[p.name] = exactMask(p.shape, density, seed++);
  }
  return m;
}

/// A random batch for the schedule's inputs (labels in range).
inline std::vector<Tensor> randomBatch(const Schedule &s, uint32_t seed) {
  std::vector<Tensor> batch;
  for (const InputSpec &in : s.inputs) {
    if (!in.numClasses) {
      batch.push_back(randomTensor(in.shape, seed++));
      continue;
    }
    std::mt19937 gen(seed++);
    std::uniform_int_distribution<int64_t> label(0, *in.numClasses - 1);
    std::vector<int64_t> v(numElements(in.shape));
    for (int64_t &x : v)
      x = label(gen);
    batch.push_back(Tensor::fromInts(in.shape, v));
  }
  return batch;
}

inline void expectClose(const Tensor &got, const Tensor &want, double rtol,
                        const std::string &what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<float> g = got.toFloats(), w = want.toFloats();
  for (size_t i = 0; i < w.size(); ++i)
    ASSERT_NEAR(g[i], w[i], rtol * (1e-2 + std::fabs(w[i]))) << what << " element " << i;
}

inline const SparseTiming &sparseOf(const Session &s) { return s.lastReport().timing.sparse.value(); }

inline json sparseMlp() { return loadJsonInput("sparse_mlp_s1.json"); }

/// Index of the first step with these op and param.
inline size_t stepOf(const json &doc, const std::string &op, const std::string &param) {
  for (size_t i = 0; i < doc["steps"].size(); ++i)
    if (doc["steps"][i]["op"] == op && doc["steps"][i].value("param", "") == param)
      return i;
  throw std::runtime_error("no " + op + " of " + param);
}

inline size_t kernelOf(const json &doc, const std::string &name) {
  for (size_t i = 0; i < doc["steps"].size(); ++i)
    if (doc["steps"][i].value("name", "") == name)
      return i;
  throw std::runtime_error("no kernel " + name);
}

} // namespace wsc::rt::test

#endif // WSC_UNITTESTS_RUNTIME_SPARSETESTUTIL_H
