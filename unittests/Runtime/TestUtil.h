//===- TestUtil.h - Builds small schedules inline for runtime tests -*- C++ -*-===//
//
// The one C++ builder of hand-made test schedules (python/tests/
// schedule_builder.py is the Python one, with the same target).
// scheduleDocument() wraps a test's values and steps in the header every
// test schedule shares. KernelBuilder assembles a schedule with a single
// kernel whose operands are streamed parameters (any float shape) or batch
// inputs (any dtype, dim 0 = the global batch). Tests then run the kernel
// directly through the Interpreter and compare with naive loops.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_UNITTESTS_RUNTIME_TESTUTIL_H
#define WSC_UNITTESTS_RUNTIME_TESTUTIL_H

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Schedule/Format.h"
#include "wsc/Support/Tensor.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace wsc::rt::test {

using nlohmann::json;

/// The target every hand-made test schedule carries: the same as TARGET in
/// python/tests/schedule_builder.py (CS-2 figures but for a 1e14 FLOP/s
/// MemoryX).
inline json targetJson() {
  return {{"pe_x", 924},          {"pe_y", 920},
          {"sram_per_pe_bytes", 49152}, {"clock_hz", 1.1e9},
          {"fmac_per_pe_per_cycle", 4}, {"io_bytes_per_s", 1.5e11},
          {"swarmx_fanout", 4},   {"swarmx_hop_latency_s", 1e-6},
          {"memx_capacity_bytes", 4e12}, {"memx_flops_per_s", 1e14},
          {"fabric_bytes_per_cycle", 4}};
}

/// What differs between hand-made schedules; scheduleDocument() adds the rest.
struct ScheduleParts {
  std::string kind = "inference"; // or "train"
  std::string mode = "weight_streaming";
  int systems = 1;
  int64_t globalBatch = 1;
  json params = json::array(), inputs = json::array(), outputs = json::array();
  json values = json::array(), steps = json::array();
};

/// A whole schedule document (f32 streams and gradients, targetJson()).
inline json scheduleDocument(const ScheduleParts &p) {
  return {{"format", schedule::kFormatName},
          {"version", schedule::kScheduleVersion},
          {"function", p.kind == "train" ? "train_step" : "forward"},
          {"kind", p.kind},
          {"mode", p.mode},
          {"systems", p.systems},
          {"global_batch", p.globalBatch},
          {"stream_dtype", "f32"},
          {"gradient_dtype", "f32"},
          {"target", targetJson()},
          {"params", p.params},
          {"inputs", p.inputs},
          {"outputs", p.outputs},
          {"values", p.values},
          {"steps", p.steps}};
}

/// d_i (coefficient c).
inline json d(int i, int c = 1) { return json::array({json::array({i, c})}); }
inline json cst(int64_t c) { return json::array({json{{"const", c}}}); }

class RegionBuilder;

class KernelBuilder {
public:
  int value(const Shape &shape, const std::string &dt = "f32", json batchDim = nullptr) {
    int id = static_cast<int>(values_.size());
    values_.push_back({{"id", id}, {"shape", shape}, {"dtype", dt}, {"batch_dim", batchDim}});
    return id;
  }
  /// A float operand delivered by an f32 weight stream of a parameter.
  int param(const Shape &shape) {
    std::string name = "p" + std::to_string(params_.size());
    params_.push_back({{"name", name}, {"shape", shape}, {"dtype", "f32"},
                       {"optimizer", {{"name", "sgd"}, {"lr", 0.1}, {"momentum", 0.0},
                                      {"dampening", 0.0}, {"weight_decay", 0.0},
                                      {"nesterov", false}}}});
    int outer = value(shape);
    steps_.push_back({{"op", "weight_stream"}, {"param", name}, {"order", "row_major"},
                      {"dtype", "f32"}, {"result", outer}, {"bytes", 4}});
    return addOperand(outer);
  }
  /// An operand that is a schedule input (dim 0 = global batch).
  int input(const Shape &shape, const std::string &dt = "f32") {
    globalBatch_ = shape.at(0);
    int outer = value(shape, dt, 0);
    inputs_.push_back({{"name", "in" + std::to_string(inputs_.size())}, {"role", "input"},
                       {"value", outer}, {"dtype", dt}, {"shape", shape}});
    return addOperand(outer);
  }

  int empty(const Shape &shape, const std::string &dt = "f32") {
    int r = value(shape, dt);
    ops_.push_back({{"op", "tensor.empty"}, {"operands", json::array()}, {"results", {r}}});
    return r;
  }
  int constant(json v, const Shape &shape, const std::string &dt = "f32") {
    int r = value(shape, dt);
    ops_.push_back({{"op", "arith.constant"}, {"operands", json::array()}, {"results", {r}},
                    {"value", v}});
    return r;
  }
  int reshape(const std::string &kind, int x, const Shape &shape, json reassociation) {
    int r = value(shape, dtypeOf(x));
    ops_.push_back({{"op", "tensor." + kind + "_shape"}, {"operands", {x}}, {"results", {r}},
                    {"reassociation", reassociation}});
    return r;
  }
  /// A structured op; `body` fills the region and returns the yields.
  std::vector<int> linalg(const std::string &name, const std::vector<int> &ins,
                          const std::vector<int> &outs, const std::vector<std::string> &iterators,
                          json maps, const std::function<std::vector<int>(RegionBuilder &)> &body);
  int linalg1(const std::string &name, const std::vector<int> &ins, int out,
              const std::vector<std::string> &iterators, json maps,
              const std::function<int(RegionBuilder &)> &body);

  const std::string &dtypeOf(int v) const { return values_[v]["dtype"].get_ref<const std::string &>(); }
  Shape shapeOf(int v) const { return values_[v]["shape"].get<Shape>(); }

  /// The schedule JSON with the kernel yielding `yields`.
  json document(const std::vector<int> &yields) {
    json vals = values_;
    json steps = steps_;
    std::vector<int> results;
    for (int y : yields) {
      int r = static_cast<int>(vals.size());
      json v = vals[y];
      v["id"] = r;
      vals.push_back(v);
      results.push_back(r);
    }
    steps.push_back({{"op", "kernel"}, {"name", "k"}, {"layer", "l"}, {"phase", "forward"},
                     {"operands", outerOperands_}, {"results", results},
                     {"cost", {{"flops", 1}, {"cycles", 1000}, {"pes", 1}}},
                     {"body", {{"args", args_}, {"ops", ops_}, {"yields", yields}}}});
    json outputs = json::array();
    for (size_t i = 0; i < results.size(); ++i)
      outputs.push_back({{"name", "out" + std::to_string(i)}, {"role", "output"},
                         {"value", results[i]}});
    ScheduleParts parts;
    parts.globalBatch = globalBatch_;
    parts.params = params_;
    parts.inputs = inputs_;
    parts.outputs = outputs;
    parts.values = vals;
    parts.steps = steps;
    return scheduleDocument(parts);
  }
  Schedule build(const std::vector<int> &yields) {
    return parseSchedule(document(yields).dump(), "test.json");
  }
  size_t kernelStep() const { return steps_.size(); }

private:
  friend class RegionBuilder;
  int addOperand(int outer) {
    outerOperands_.push_back(outer);
    json v = values_[outer];
    int arg = value(v["shape"].get<Shape>(), v["dtype"].get<std::string>(), v["batch_dim"]);
    args_.push_back(arg);
    return arg;
  }

  json values_ = json::array(), params_ = json::array(), inputs_ = json::array();
  json steps_ = json::array(), ops_ = json::array();
  std::vector<int> args_, outerOperands_;
  int64_t globalBatch_ = 1;
};

/// Scalar ops of one region.
class RegionBuilder {
public:
  RegionBuilder(KernelBuilder &b, const std::vector<int> &operands) : b_(b) {
    for (int o : operands)
      args.push_back(b.value({}, b.dtypeOf(o)));
  }
  int op(const std::string &name, const std::vector<int> &operands, const std::string &dt,
         json extra = json::object()) {
    int r = b_.value({}, dt);
    json o = {{"op", name}, {"operands", operands}, {"results", {r}}};
    for (auto &[k, v] : extra.items())
      o[k] = v;
    ops.push_back(o);
    return r;
  }
  int bin(const std::string &name, int a, int b) { return op(name, {a, b}, b_.dtypeOf(a)); }
  int un(const std::string &name, int a) { return op(name, {a}, b_.dtypeOf(a)); }
  int fconst(double v, const std::string &dt = "f32") {
    return op("arith.constant", {}, dt, {{"value", v}});
  }
  std::vector<int> args;
  json ops = json::array();

private:
  KernelBuilder &b_;
};

inline std::vector<int> KernelBuilder::linalg(const std::string &name, const std::vector<int> &ins,
                                              const std::vector<int> &outs,
                                              const std::vector<std::string> &iterators, json maps,
                                              const std::function<std::vector<int>(RegionBuilder &)> &body) {
  std::vector<int> operands = ins;
  operands.insert(operands.end(), outs.begin(), outs.end());
  RegionBuilder r(*this, operands);
  std::vector<int> yields = body(r);
  std::vector<int> results;
  for (int o : outs)
    results.push_back(value(shapeOf(o), dtypeOf(o)));
  ops_.push_back({{"op", "linalg"}, {"name", name}, {"operands", operands},
                  {"num_inputs", ins.size()}, {"results", results}, {"iterators", iterators},
                  {"maps", maps},
                  {"region", {{"args", r.args}, {"ops", r.ops}, {"yields", yields}}}});
  return results;
}

inline int KernelBuilder::linalg1(const std::string &name, const std::vector<int> &ins, int out,
                                  const std::vector<std::string> &iterators, json maps,
                                  const std::function<int(RegionBuilder &)> &body) {
  return linalg(name, ins, {out}, iterators, maps,
                [&](RegionBuilder &r) { return std::vector<int>{body(r)}; })[0];
}

/// A contraction's region: out + in0 * in1.
inline int mulAdd(RegionBuilder &r) {
  return r.bin("arith.addf", r.args[2], r.bin("arith.mulf", r.args[0], r.args[1]));
}

/// The operands and result of one linalg.matmul c[M, N] += a[M, K] b[K, N]
/// built by matmulKernel.
struct MatmulOperands {
  int a, b, init, out;
};

/// Adds a [M, K] x [K, N] linalg.matmul whose operands are parameters; each
/// is stored transposed when its flag is set (a as [K, M], b as [N, K], the
/// init and result as [N, M]).
inline MatmulOperands matmulKernel(KernelBuilder &kb, bool transA, bool transB, bool transC,
                                   int64_t M, int64_t N, int64_t K) {
  MatmulOperands m;
  m.a = kb.param(transA ? Shape{K, M} : Shape{M, K});
  m.b = kb.param(transB ? Shape{N, K} : Shape{K, N});
  m.init = kb.param(transC ? Shape{N, M} : Shape{M, N});
  json maps = {transA ? json{d(2), d(0)} : json{d(0), d(2)},
               transB ? json{d(1), d(2)} : json{d(2), d(1)},
               transC ? json{d(1), d(0)} : json{d(0), d(1)}};
  m.out = kb.linalg1("linalg.matmul", {m.a, m.b}, m.init, {"parallel", "parallel", "reduction"},
                     maps, mulAdd);
  return m;
}

inline Tensor randomTensor(const Shape &shape, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(numElements(shape));
  for (float &x : v)
    x = dist(gen);
  return Tensor::fromFloats(shape, v);
}

/// Source directory of the test inputs (set by CMake).
inline std::string inputPath(const std::string &name) {
  return std::string(WSC_RUNTIME_TEST_INPUTS) + "/" + name;
}

/// A JSON test input (Inputs/`name`) as a document.
inline json loadJsonInput(const std::string &name) {
  std::ifstream in(inputPath(name));
  if (!in)
    throw std::runtime_error("cannot open test input " + inputPath(name));
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

/// The message parsing a schedule fails with ("" if it parses).
inline std::string scheduleErrorOf(const std::string &text) {
  try {
    parseSchedule(text, "test.json");
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}
inline std::string scheduleErrorOf(const json &doc) { return scheduleErrorOf(doc.dump()); }

} // namespace wsc::rt::test

/// Parsing `doc` (JSON or text) fails with a message containing `text`.
#define EXPECT_SCHEDULE_ERROR(doc, text)                                           \
  do {                                                                             \
    std::string msg_ = ::wsc::rt::test::scheduleErrorOf(doc);                      \
    EXPECT_NE(msg_.find(text), std::string::npos) << "got: '" << msg_ << "'";      \
  } while (0)

/// `expr` throws a wsc::rt::Error whose message contains `text`.
#define EXPECT_ERROR(expr, text)                                                   \
  do {                                                                             \
    std::string msg_;                                                              \
    try {                                                                          \
      (void)(expr);                                                                \
    } catch (const ::wsc::rt::Error &e_) {                                         \
      msg_ = e_.what();                                                            \
    }                                                                              \
    EXPECT_NE(msg_.find(text), std::string::npos)                                  \
        << #expr << " threw '" << msg_ << "'";                                     \
  } while (0)

#endif // WSC_UNITTESTS_RUNTIME_TESTUTIL_H
