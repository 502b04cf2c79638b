//===- VtsScheduleTest.cpp - Variable tensor shape: schedule validation ---===//
//
// Every VTS rule of docs/ScheduleFormat.md has a test here: each mutates a
// valid schedule of Inputs/generate_vts.py and expects the message, with its
// JSON path.
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Session.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <random>
#include <sstream>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

json mlp() { return loadJsonInput("vts_mlp.json"); }
json attention() { return loadJsonInput("vts_attention.json"); }

size_t stepOf(const json &doc, const std::string &op, const std::string &name = "") {
  for (size_t i = 0; i < doc["steps"].size(); ++i) {
    const json &st = doc["steps"][i];
    if (st["op"] == op && (name.empty() || st.value("name", "") == name))
      return i;
  }
  ADD_FAILURE() << "no step " << op << " " << name;
  return 0;
}

json &kernel(json &doc, const std::string &name) {
  return doc["steps"][stepOf(doc, "kernel", name)];
}
json &valueOf(json &doc, int id) { return doc["values"][id]; }

/// A new top-level value like `id` (shape, dtype, batch dim, ragged).
int newValueLike(json &doc, int id) {
  json v = doc["values"][id];
  const int fresh = static_cast<int>(doc["values"].size());
  v["id"] = fresh;
  doc["values"].push_back(v);
  return fresh;
}

std::string at(size_t step) { return "steps[" + std::to_string(step) + "]"; }

TEST(VtsSchedule, ValidSchedulesParse) {
  EXPECT_EQ(scheduleErrorOf(mlp()), "");
  EXPECT_EQ(scheduleErrorOf(attention()), "");
  EXPECT_EQ(scheduleErrorOf(loadJsonInput("vts_mlp_lp.json")), "");
  Schedule s = parseSchedule(mlp().dump(), "m.json");
  ASSERT_TRUE(s.vts);
  EXPECT_EQ(s.vts->firstStep, 2);
  EXPECT_EQ(s.vts->masks[0].seq, 6);
  EXPECT_EQ(s.steps[5].mask, 0);
  EXPECT_EQ(s.sampleShape(5, 2), (Shape{1, 2, 5}));
}

TEST(VtsSchedule, Threshold) {
  for (double t : {-0.5, 1.5, -1e-300}) {
    json d = mlp();
    d["vts"]["threshold"] = t;
    EXPECT_SCHEDULE_ERROR(d, "vts.threshold: threshold must lie in [0, 1]");
  }
}

// wsc-vts writes 0 when stripping never pays (its threshold is clamped at 0).
TEST(VtsSchedule, ThresholdZeroIsNeverRagged) {
  json d = mlp();
  d["vts"]["threshold"] = 0.0;
  Schedule s = parseSchedule(d.dump(), "zero.json");
  ASSERT_TRUE(s.vts);
  EXPECT_EQ(s.vts->threshold, 0.0);
}

TEST(VtsSchedule, UnknownMaskGroup) {
  json d = mlp();
  kernel(d, "fc.fwd")["ragged"] = 3;
  EXPECT_SCHEDULE_ERROR(d, at(5) + ".ragged: unknown mask group 3 (the schedule has 1)");
  d = mlp();
  d["steps"][2]["mask"] = 1;
  EXPECT_SCHEDULE_ERROR(d, at(2) + ".mask: unknown mask group 1 (the schedule has 1)");
  d = mlp();
  valueOf(d, 5)["ragged"]["mask"] = 2;
  EXPECT_SCHEDULE_ERROR(d, "values[5].ragged.mask: unknown mask group 2 (the schedule has 1)");
  d = mlp();
  d.erase("vts");
  EXPECT_SCHEDULE_ERROR(d, "unknown mask group 0 (the schedule has no 'vts' section)");
}

TEST(VtsSchedule, MaskValueShape) {
  json d = mlp();
  d["vts"]["masks"][0]["seq"] = 5;
  EXPECT_SCHEDULE_ERROR(d, "vts.masks[0].value: mask value 2 is [4, 6] with batch_dim 0; a "
                           "mask is [global_batch, seq] = [4, 5] with batch_dim 0");
  d = mlp();
  d["vts"]["masks"][0]["value"] = 0;
  EXPECT_SCHEDULE_ERROR(d, "mask value 0 is [4, 6, 5] with batch_dim 0");
  d = mlp();
  d["vts"]["masks"][0]["value"] = 3; // the streamed weight
  EXPECT_SCHEDULE_ERROR(d, "mask value 3 is [3, 5] with no batch_dim");
  d = mlp();
  d["vts"]["masks"] = json::array();
  EXPECT_SCHEDULE_ERROR(d, "vts.masks: a vts section needs at least one mask group");
}

TEST(VtsSchedule, MaskDefinedBeforeFirstUse) {
  // A mask computed after the first strip: the ragged/dense decision needs it.
  json d = mlp();
  const int late = newValueLike(d, 2);
  d["steps"].insert(
      d["steps"].begin() + 6,
      json{{"op", "layout_convert"}, {"operand", 2}, {"result", late}, {"cycles", 0}});
  d["vts"]["masks"][0]["value"] = late;
  EXPECT_SCHEDULE_ERROR(d, "vts.masks[0].value: mask value " + std::to_string(late) +
                               " is defined at steps[6], not before steps[2], the first step "
                               "using variable tensor shapes");
  // Before the first strip it is fine.
  d = mlp();
  const int early = newValueLike(d, 2);
  d["steps"].insert(
      d["steps"].begin(),
      json{{"op", "layout_convert"}, {"operand", 2}, {"result", early}, {"cycles", 0}});
  d["vts"]["masks"][0]["value"] = early;
  EXPECT_EQ(scheduleErrorOf(d), "");
  // Never defined.
  d = mlp();
  d["vts"]["masks"][0]["value"] = newValueLike(d, 2);
  EXPECT_SCHEDULE_ERROR(d, "is not defined by an input or a step");
}

TEST(VtsSchedule, RaggedDims) {
  json d = mlp();
  valueOf(d, 5)["ragged"]["dims"] = {3};
  EXPECT_SCHEDULE_ERROR(d, "values[5].ragged.dims[0]: ragged dim 3 out of range for a rank-3 "
                           "value");
  d = mlp();
  valueOf(d, 5)["ragged"]["dims"] = {1, 1};
  EXPECT_SCHEDULE_ERROR(d, "values[5].ragged.dims[1]: ragged dim 1 is listed twice");
  d = mlp();
  valueOf(d, 5)["ragged"]["dims"] = json::array();
  EXPECT_SCHEDULE_ERROR(d, "values[5].ragged.dims: a ragged value needs at least one ragged dim");
  d = mlp();
  valueOf(d, 5)["ragged"]["dims"] = {2};
  EXPECT_SCHEDULE_ERROR(d, "values[5].ragged.dims: ragged dim 2 of value 5 has 5 elements per "
                           "sample, not a multiple of mask group 0's seq 6");
  // The batch dim's extent is per sample: [B*S, H] with batch_dim 0 holds S.
  d = mlp();
  EXPECT_EQ(valueOf(d, 11)["shape"], json({24, 5}));
  valueOf(d, 11)["shape"] = {48, 5}; // 12 per sample: still a multiple
  EXPECT_SCHEDULE_ERROR(d, "reassociation group 0 multiplies to 24");
}

TEST(VtsSchedule, WhereRaggedValuesLive) {
  json d = mlp();
  valueOf(d, 0)["ragged"] = {{"mask", 0}, {"dims", {1}}};
  EXPECT_SCHEDULE_ERROR(d, "inputs[0].value: value 0 of input 'x' is ragged; inputs are padded");
  d = attention();
  valueOf(d, 4)["ragged"] = {{"mask", 0}, {"dims", {0}}}; // the streamed [S, D] table
  EXPECT_SCHEDULE_ERROR(d, "steps[1].result: value 4 is ragged but has no batch_dim (only kernel "
                           "body values may)");
  d = attention();
  d["outputs"][0]["value"] = 109; // the result of softmax_av, before its restore
  EXPECT_SCHEDULE_ERROR(d, "outputs[0].value: output value 109 is ragged; restore_padding it "
                           "first");
}

TEST(VtsSchedule, StripAndRestore) {
  // Stripping a ragged value.
  json d = mlp();
  int r = newValueLike(d, 5);
  d["steps"].insert(
      d["steps"].begin() + 3,
      json{{"op", "strip_padding"}, {"operand", 5}, {"mask", 0}, {"result", r}, {"cycles", 1}});
  EXPECT_SCHEDULE_ERROR(d, at(3) + ".operand: value 5 is already ragged (ragged dims [1] in mask "
                                   "group 0); strip_padding takes a dense (padded) value");
  // Restoring a dense value.
  d = mlp();
  r = newValueLike(d, 0);
  d["steps"].insert(
      d["steps"].begin() + 3,
      json{{"op", "restore_padding"}, {"operand", 0}, {"mask", 0}, {"result", r}, {"cycles", 1}});
  EXPECT_SCHEDULE_ERROR(d, at(3) + ".operand: value 0 is not ragged; restore_padding takes a "
                                   "ragged value");
  // A strip whose result is not marked ragged.
  d = mlp();
  valueOf(d, 5).erase("ragged");
  EXPECT_SCHEDULE_ERROR(d, at(2) + ".result: value 5 must be ragged in mask group 0, is dense");
  // A restore whose result is still ragged.
  d = attention();
  valueOf(d, 110)["ragged"] = {{"mask", 0}, {"dims", {1}}};
  EXPECT_SCHEDULE_ERROR(d, ".result: value 110 is ragged; restore_padding produces the dense "
                           "value");
  // Shapes must agree; a strip needs a batch value.
  d = mlp();
  d["steps"][2]["operand"] = 1;
  EXPECT_SCHEDULE_ERROR(d, at(2) + ".result: strip_padding changes no shape or dtype");
  d = mlp();
  d["steps"][2]["operand"] = 3;
  EXPECT_SCHEDULE_ERROR(d, at(2) + ".operand: strip_padding needs a batch value; value 3 has no "
                                   "batch_dim");
}

TEST(VtsSchedule, RaggedValuesNeedRaggedKernels) {
  json d = mlp();
  kernel(d, "loss").erase("ragged");
  EXPECT_SCHEDULE_ERROR(d, at(6) + ".operands[0]: value 31 is ragged dims [1] in mask group 0 "
                                   "but kernel 'loss' does not run ragged (restore_padding it "
                                   "first)");
  // Two groups: a kernel of group 1 cannot read group 0's values.
  d = mlp();
  d["vts"]["masks"].push_back(d["vts"]["masks"][0]);
  kernel(d, "fc.fwd")["ragged"] = 1;
  EXPECT_SCHEDULE_ERROR(d, at(5) + ".operands[0]: value 5 is ragged dims [1] in mask group 0 but "
                                   "kernel 'fc.fwd' runs ragged in mask group 1");
  // A body value marked ragged in a kernel that is not ragged.
  d = attention();
  json &stats = kernel(d, "stats");
  stats.erase("ragged");
  stats["operands"][0] = 0; // the dense q
  valueOf(d, 20).erase("ragged");
  EXPECT_SCHEDULE_ERROR(d, "value 27 is ragged but its kernel has no 'ragged' mask group");
}

TEST(VtsSchedule, DenseTokenOperandOfRaggedKernel) {
  // The loss reads the unstripped target where its body expects it ragged.
  json d = mlp();
  kernel(d, "loss")["operands"][1] = 1;
  EXPECT_SCHEDULE_ERROR(d, at(6) + ".body.args[1]: body argument vs operand: value 33 is ragged "
                                   "dims [1] in mask group 0 but value 1 is dense");
}

TEST(VtsSchedule, SlicesTakePrefixes) {
  json d = attention();
  json &slice = kernel(d, "embed")["body"]["ops"][0];
  ASSERT_EQ(slice["op"], "tensor.extract_slice");
  slice["offsets"] = {1, 0};
  EXPECT_SCHEDULE_ERROR(d, "body.ops[0].offsets[0]: slice dim 0 is ragged but starts at 1 with "
                           "stride 1 (only a prefix of a ragged dim is valid: offset 0, stride 1)");
}

TEST(VtsSchedule, ReshapesKeepRaggedDims) {
  json d = mlp();
  valueOf(d, 11).erase("ragged"); // fc.fwd's [B*S, H] collapse
  EXPECT_SCHEDULE_ERROR(d, "body.ops[0].reassociation[0]: reassociation group 0 maps 1 ragged "
                           "dim(s) to a dense dim");
}

TEST(VtsSchedule, LoopsAgreeOnRaggedness) {
  json d = mlp();
  for (int id : {12, 15, 21}) // fc.fwd's accumulator, dense
    valueOf(d, id).erase("ragged");
  EXPECT_SCHEDULE_ERROR(d, "body.ops[3].maps[2][0]: loop d0 has per-sample extent 1 x len from "
                           "operand 0 dim 0 but operand 2 dim 0 (value 15, dense) has 6");
  // The [S, S] causal constant must be marked ragged like the scores.
  d = attention();
  valueOf(d, 58).erase("ragged");
  EXPECT_SCHEDULE_ERROR(d, "loop d1 has per-sample extent 1 x len from operand 0 dim 1 but "
                           "operand 1 dim 0 (value 58, dense) has 8");
}

TEST(VtsSchedule, LinalgResultsFollowTheirInits) {
  json d = mlp();
  valueOf(d, 15).erase("ragged");
  EXPECT_SCHEDULE_ERROR(d, "result value 15 is dense but its init operand 12 is ragged dims [0] "
                           "in mask group 0");
}

TEST(VtsSchedule, NonBatchResults) {
  // stats yields 2 * pe; reading pe per sample (ragged) would make that
  // result vary with the length though it does not depend on the batch.
  json d = attention();
  for (int id : {21, 22, 26})
    valueOf(d, id)["ragged"] = {{"mask", 0}, {"dims", {0}}};
  EXPECT_SCHEDULE_ERROR(d, "body.yields[0]: non-batch result 0 of ragged kernel 'stats' does not "
                           "depend on the batch, yet varies with the samples' lengths");
}

TEST(VtsSchedule, MaskOfAnyDtype) {
  // The attention mask as i64 (and f32): the same outputs as i1.
  auto run = [](const std::string &dtype) {
    json d = attention();
    d["inputs"][2]["dtype"] = dtype;
    valueOf(d, 2)["dtype"] = dtype;
    Session s(parseSchedule(d.dump(), "a.json"));
    s.loadWeights({{"pos", randomTensor({10, 4}, 1)}, {"pe", randomTensor({8, 4}, 2)}});
    std::vector<int64_t> m;
    for (int64_t len : {8, 3, 0, 5})
      for (int64_t j = 0; j < 8; ++j)
        m.push_back(j < len ? 7 : 0);
    const Tensor mask = dtype == "f32"
                            ? Tensor::fromFloats({4, 8}, std::vector<float>(m.begin(), m.end()))
                            : Tensor::fromInts({4, 8}, m);
    std::vector<Tensor> out =
        s.infer({randomTensor({4, 8, 4}, 3), randomTensor({4, 8, 4}, 4), mask});
    EXPECT_EQ(s.maskLengths(0), (std::vector<int64_t>{8, 3, 0, 5}));
    return out[0].toFloats();
  };
  EXPECT_EQ(run("i64"), run("f32"));
}

/// Inputs for `s` by its input specs: rank-2 ones are masks (prefixes of
/// lengths 3, 0, 5, ...), other floats random, integers zero.
std::vector<Tensor> inputsFor(const Schedule &s) {
  std::vector<Tensor> in;
  for (const InputSpec &spec : s.inputs) {
    const int64_t n = numElements(spec.shape);
    if (spec.shape.size() == 2) {
      std::vector<int64_t> m(n);
      for (int64_t i = 0; i < n; ++i)
        m[i] = (i % spec.shape[1]) < (3 + 5 * (i / spec.shape[1])) % 7;
      in.push_back(isFloat(spec.dtype)
                       ? Tensor::fromFloats(spec.shape, std::vector<float>(m.begin(), m.end()),
                                            spec.dtype)
                       : Tensor::fromInts(spec.shape, m, spec.dtype));
    } else if (isFloat(spec.dtype)) {
      in.push_back(randomTensor(spec.shape, 5));
    } else {
      in.push_back(Tensor::fromInts(spec.shape, std::vector<int64_t>(n, 0), spec.dtype));
    }
  }
  return in;
}

/// Random corruptions of the VTS schedules: parsing, and running what
/// parses, throws nothing but Error. (Run under WSC_SANITIZE=ON.)
TEST(VtsSchedule, MutatedSchedulesThrowOnlyErrors) {
  const std::vector<json> replacements = {nullptr, -1, 0, 1, 2, 3, 8, json::array({1}),
                                          json::array({0, 1}), json::object(), "x", 0.5};
  std::mt19937 gen(4321);
  int accepted = 0, ran = 0;
  for (const char *name : {"vts_mlp.json", "vts_attention.json", "vts_mlp_lp.json"}) {
    const json base = loadJsonInput(name);
    for (int iter = 0; iter < 400; ++iter) {
      json doc = base;
      std::vector<json *> nodes;
      std::function<void(json &)> collect = [&](json &j) {
        nodes.push_back(&j);
        if (j.is_structured())
          for (auto &child : j)
            collect(child);
      };
      collect(doc);
      // Bias towards the VTS parts: "ragged", "vts", strip / restore.
      for (int e = 0; e < 1 + static_cast<int>(gen() % 2); ++e) {
        json *n = nodes[gen() % nodes.size()];
        if (n != &doc)
          *n = replacements[gen() % replacements.size()];
        nodes.clear();
        collect(doc);
      }
      if (iter % 3 == 0)
        doc["vts"]["threshold"] = 1.0;
      try {
        Schedule s = parseSchedule(doc.dump(), "fuzz.json");
        ++accepted;
        Session session(std::move(s));
        std::map<std::string, Tensor> weights;
        for (const ParamSpec &p : session.schedule().params)
          weights[p.name] = randomTensor(p.shape, 9);
        session.loadWeights(weights);
        if (session.schedule().isTraining())
          session.step(inputsFor(session.schedule()));
        else
          session.infer(inputsFor(session.schedule()));
        ++ran;
      } catch (const Error &) {
      } catch (const std::exception &ex) {
        FAIL() << "non-Error exception: " << ex.what() << "\n" << doc.dump();
      }
    }
  }
  EXPECT_GT(accepted, 10) << ran;
  EXPECT_GT(ran, 5) << accepted;
}

} // namespace
