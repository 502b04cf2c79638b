//===- MicroBatchTest.cpp - Micro-batched steps: parse, run, model --------===//
//
// A schedule with micro_batch_size runs each system's shard as micro-batches:
// the hand-made linear + MSE schedules divide by the global batch, so the
// micro-batched step equals the whole-batch one up to FP32 summation order.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Report.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Support/Error.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

json doc(const std::string &file) { return json::parse(std::ifstream(inputPath(file))); }

Schedule withMicroBatch(const std::string &file, int64_t size) {
  json d = doc(file);
  d["micro_batch_size"] = size;
  return parseSchedule(d.dump(), file);
}

TEST(MicroBatch, ParsesTheSizeAndCountsMicroBatches) {
  Schedule none = loadSchedule(inputPath("linear_mse_s3.json"));
  EXPECT_FALSE(none.microBatchSize);
  EXPECT_EQ(none.microBatches(), 1);
  // Batch 7 over 3 systems: shards 3, 2, 2; micro-batches of 2 -> 2 per step.
  Schedule s = withMicroBatch("linear_mse_s3.json", 2);
  EXPECT_EQ(*s.microBatchSize, 2);
  EXPECT_EQ(s.microBatches(), 2);
  EXPECT_EQ(withMicroBatch("linear_mse_s1.json", 3).microBatches(), 3);
  const BatchShard shard{4, 3};
  EXPECT_EQ(microBatchOf(shard, 2, 0).begin, 4);
  EXPECT_EQ(microBatchOf(shard, 2, 0).size, 2);
  EXPECT_EQ(microBatchOf(shard, 2, 1).begin, 6);
  EXPECT_EQ(microBatchOf(shard, 2, 1).size, 1);
  EXPECT_EQ(microBatchOf(shard, 2, 2).size, 0);
}

TEST(MicroBatch, RejectsBadSizesAndWhatItCannotSplit) {
  json d = doc("linear_mse_s1.json");
  d["micro_batch_size"] = 0;
  EXPECT_SCHEDULE_ERROR(d, "test.json: micro_batch_size: value 0 out of range");
  d["micro_batch_size"] = "auto";
  EXPECT_SCHEDULE_ERROR(d, "test.json: micro_batch_size: expected an integer");
  d["micro_batch_size"] = 8;
  EXPECT_SCHEDULE_ERROR(d, "test.json: micro_batch_size: micro_batch_size 8 exceeds the "
                           "per-system batch 7 (global batch 7 over 1 systems)");
  d = doc("linear_mse_s3.json");
  d["micro_batch_size"] = 4;
  EXPECT_SCHEDULE_ERROR(d, "exceeds the per-system batch 3 (global batch 7 over 3 systems)");
  d = doc("mlp_ce_lp.json");
  d["micro_batch_size"] = 2;
  EXPECT_SCHEDULE_ERROR(d, "micro_batch_size: micro-batching is for weight streaming");
  d = doc("vts_mlp.json");
  d["micro_batch_size"] = 2;
  EXPECT_SCHEDULE_ERROR(d, "micro_batch_size: micro-batching a schedule with variable tensor "
                           "shapes is not supported");
  d = doc("sparse_mlp_s1.json");
  d["micro_batch_size"] = 2;
  EXPECT_SCHEDULE_ERROR(d, "micro-batching sparse weight streams (steps[");
  // More micro-batches than a step takes: the batch of 7 scaled to 2^17.
  d = doc("linear_mse_s1.json");
  const int64_t batch = int64_t(1) << 17;
  d["global_batch"] = batch;
  for (json &v : d["values"])
    if (!v["batch_dim"].is_null())
      v["shape"][v["batch_dim"].get<int>()] = batch;
  for (json &in : d["inputs"])
    in["shape"][0] = batch;
  d["micro_batch_size"] = 2; // 65536, the most a step takes
  EXPECT_EQ(parseSchedule(d.dump(), "test.json").microBatches(), 65536);
  d["micro_batch_size"] = 1;
  EXPECT_SCHEDULE_ERROR(d, "micro_batch_size 1 makes 131072 micro-batches of the per-system "
                           "batch 131072; a step takes at most 65536");
}

std::map<std::string, Tensor> linearWeights() {
  return {{"fc.weight", randomTensor({2, 3}, 31)}, {"fc.bias", randomTensor({2}, 32)}};
}

void expectSameTraining(const std::string &file, int64_t size) {
  Session whole(loadSchedule(inputPath(file)));
  Session micro(withMicroBatch(file, size));
  whole.loadWeights(linearWeights());
  micro.loadWeights(linearWeights());
  for (int step = 0; step < 3; ++step) {
    Tensor x = randomTensor({7, 3}, 40 + step), t = randomTensor({7, 2}, 50 + step);
    const double want = whole.step({x, t});
    EXPECT_NEAR(micro.step({x, t}), want, 1e-6 * (1 + want)) << file << " step " << step;
  }
  for (const auto &[name, w] : whole.weights()) {
    const std::vector<float> a = w.toFloats(), b = micro.weights().at(name).toFloats();
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_NEAR(b[i], a[i], 1e-6) << file << " " << name << "[" << i << "]";
  }
}

TEST(MicroBatch, TrainsLikeTheWholeBatch) {
  expectSameTraining("linear_mse_s1.json", 1);
  expectSameTraining("linear_mse_s1.json", 3); // 3, 3, 1
  // Shards 3, 2, 2 in micro-batches of 2: systems 1 and 2 sit the second out.
  expectSameTraining("linear_mse_s3.json", 2);
}

TEST(MicroBatch, InferenceConcatenatesMicroBatchesInBatchOrder) {
  std::map<std::string, Tensor> w = {{"fc0.weight", randomTensor({5, 4}, 1)},
                                     {"fc0.bias", randomTensor({5}, 2)},
                                     {"fc1.weight", randomTensor({3, 5}, 3)},
                                     {"fc1.bias", randomTensor({3}, 4)}};
  Session whole(loadSchedule(inputPath("mlp_infer_s3.json")));
  Session micro(withMicroBatch("mlp_infer_s3.json", 2));
  whole.loadWeights(w);
  micro.loadWeights(w);
  Tensor x = randomTensor({7, 4}, 5);
  const std::vector<float> a = whole.infer({x})[0].toFloats(), b = micro.infer({x})[0].toFloats();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_FLOAT_EQ(b[i], a[i]) << i;
}

TEST(MicroBatch, EveryMicroBatchStreamsTheWeightsAndMemoryXAccumulates) {
  Session whole(loadSchedule(inputPath("linear_mse_s1.json")));
  Session micro(withMicroBatch("linear_mse_s1.json", 3));
  whole.loadWeights(linearWeights());
  micro.loadWeights(linearWeights());
  Tensor x = randomTensor({7, 3}, 40), t = randomTensor({7, 2}, 50);
  whole.step({x, t});
  micro.step({x, t});
  const StepTiming &a = whole.lastReport().timing, &b = micro.lastReport().timing;
  EXPECT_EQ(a.microBatches, 1);
  EXPECT_EQ(a.microBatchSize, 0);
  EXPECT_EQ(b.microBatches, 3);
  EXPECT_EQ(b.microBatchSize, 3);
  EXPECT_DOUBLE_EQ(b.bytesIn, 3 * a.bytesIn);
  EXPECT_DOUBLE_EQ(b.bytesOut, 3 * a.bytesOut);
  EXPECT_NEAR(b.streamS, 3 * a.streamS, 1e-15);
  // Micro-batches of 3, 3 and 1 samples: 7/3 of the whole step's cycles.
  EXPECT_NEAR(b.computeS, a.computeS * 7.0 / 3.0, 1e-12 * a.computeS);
  const nlohmann::json j = stepTimingJson(b);
  EXPECT_EQ(j.at("micro_batches"), 3);
  EXPECT_EQ(j.at("micro_batch_size"), 3);
  EXPECT_FALSE(stepTimingJson(a).contains("micro_batches"));

  int spans = 0, accumulates = 0, updates = 0;
  for (const TraceEvent &e : micro.timing().events()) {
    spans += e.cat == "micro-batch";
    accumulates += e.name.rfind("accumulate ", 0) == 0;
    updates += e.name.rfind("update ", 0) == 0;
  }
  EXPECT_EQ(spans, 3);
  EXPECT_EQ(accumulates, 3 * 2); // per micro-batch, per parameter
  EXPECT_EQ(updates, 2);         // once per step
  EXPECT_NE(micro.timing().traceJson().find("micro-batch 2 (1 samples)"), std::string::npos);
}

} // namespace
