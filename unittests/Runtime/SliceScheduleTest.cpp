//===- SliceScheduleTest.cpp - Validation of slices and gathers -----------===//
//
// Every parser message for tensor.extract_slice / insert_slice body ops and
// tensor.extract region ops, each from one mutation of a valid schedule
// (Inputs/embedding_slices_s2.json, see generate.py).
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Schedule.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

json fixture() { return json::parse(std::ifstream(inputPath("embedding_slices_s2.json"))); }

json &kernelBody(json &doc) {
  for (json &st : doc["steps"])
    if (st["op"] == "kernel")
      return st["body"];
  throw std::runtime_error("fixture has no kernel");
}

json &bodyOp(json &doc, const std::string &name) {
  for (json &op : kernelBody(doc)["ops"])
    if (op["op"] == name)
      return op;
  throw std::runtime_error("fixture has no " + name);
}

json &gatherOp(json &doc) {
  for (json &op : kernelBody(doc)["ops"])
    if (op["op"] == "linalg")
      for (json &rop : op["region"]["ops"])
        if (rop["op"] == "tensor.extract")
          return rop;
  throw std::runtime_error("fixture has no tensor.extract");
}

json &value(json &doc, int id) { return doc["values"][id]; }


TEST(SliceSchedule, FixtureParses) {
  json doc = fixture();
  EXPECT_EQ(scheduleErrorOf(doc), "");
  Schedule s = parseSchedule(doc.dump(), "test.json");
  bool sawExtract = false, sawInsert = false;
  for (const Step &st : s.steps)
    for (const BodyOp &op : st.body.ops) {
      sawExtract |= op.kind == BodyOpKind::ExtractSlice;
      sawInsert |= op.kind == BodyOpKind::InsertSlice;
      if (op.kind == BodyOpKind::ExtractSlice)
        EXPECT_EQ(op.strides, (std::vector<int64_t>{1, 1, 2}));
    }
  EXPECT_TRUE(sawExtract && sawInsert);
}

TEST(SliceSchedule, RejectsMalformedSlices) {
  {
    json doc = fixture();
    bodyOp(doc, "tensor.extract_slice")["offsets"] = {0, 0};
    EXPECT_SCHEDULE_ERROR(doc, "offsets has 2 entries for a rank-3 tensor");
  }
  {
    json doc = fixture();
    bodyOp(doc, "tensor.extract_slice")["strides"] = {1, 1, 0};
    EXPECT_SCHEDULE_ERROR(doc, "value 0 out of range");
  }
  {
    json doc = fixture();
    bodyOp(doc, "tensor.extract_slice")["offsets"] = {0, 0, 3};
    EXPECT_SCHEDULE_ERROR(doc, "runs past the tensor's 5");
  }
  {
    json doc = fixture();
    value(doc, bodyOp(doc, "tensor.extract_slice")["results"][0])["dtype"] = "i64";
    EXPECT_SCHEDULE_ERROR(doc, "mixes element types");
  }
  {
    json doc = fixture();
    value(doc, bodyOp(doc, "tensor.extract_slice")["results"][0])["shape"] = {4, 3, 1};
    EXPECT_SCHEDULE_ERROR(doc, "do not match [4, 3, 1]");
  }
  {
    // Insert 4 samples into a tensor holding 8: the batch dim is not whole.
    json doc = fixture();
    json &insert = bodyOp(doc, "tensor.insert_slice");
    json &fill = kernelBody(doc)["ops"][4];
    for (int id : {fill["operands"][0].get<int>(), fill["results"][0].get<int>(),
                   insert["results"][0].get<int>()})
      value(doc, id)["shape"] = {8, 3, 3};
    EXPECT_SCHEDULE_ERROR(doc, "a slice must take the batch dim 0 whole");
  }
  {
    json doc = fixture();
    value(doc, bodyOp(doc, "tensor.extract_slice")["results"][0])["batch_dim"] = nullptr;
    EXPECT_SCHEDULE_ERROR(doc, "does not line up with dim 0");
  }
  {
    json doc = fixture();
    value(doc, bodyOp(doc, "tensor.insert_slice")["results"][0])["shape"] = {4, 3, 4};
    EXPECT_SCHEDULE_ERROR(doc, "insert_slice result must have the destination's shape");
  }
}

TEST(SliceSchedule, RejectsABatchSliceOfAnUnbatchedTensor) {
  // Gather rows of the (unbatched) table into a batched piece.
  json doc = fixture();
  json &op = bodyOp(doc, "tensor.extract_slice");
  json &table = kernelBody(doc)["args"][1];
  op["operands"][0] = table;
  op["offsets"] = {0, 0};
  op["sizes"] = {4, 2};
  op["strides"] = {1, 2};
  value(doc, op["results"][0])["shape"] = {4, 2};
  EXPECT_SCHEDULE_ERROR(doc, "the slice has a batch dim but the full tensor has none");
}

TEST(SliceSchedule, RejectsMalformedGathers) {
  {
    json doc = fixture();
    gatherOp(doc)["operands"] = json::array();
    EXPECT_SCHEDULE_ERROR(doc, "tensor.extract needs a tensor operand");
  }
  {
    json doc = fixture();
    json &g = gatherOp(doc);
    g["operands"].erase(g["operands"].begin() + 2);
    EXPECT_SCHEDULE_ERROR(doc, "takes 2 indices, got 1");
  }
  {
    json doc = fixture();
    json &g = gatherOp(doc);
    g["operands"][2] = g["operands"][1];
    value(doc, g["operands"][1])["dtype"] = "i64";
    EXPECT_SCHEDULE_ERROR(doc, "indices must be index values");
  }
  {
    json doc = fixture();
    value(doc, gatherOp(doc)["results"][0])["dtype"] = "i64";
    EXPECT_SCHEDULE_ERROR(doc, "result type differs from the tensor's");
  }
  {
    // Gather from the (batched, rank-3) init tensor of the gather itself,
    // its batch dim indexed by a token id rather than the batch loop.
    json doc = fixture();
    json &g = gatherOp(doc);
    g["operands"][0] = bodyOp(doc, "tensor.empty")["results"][0];
    g["operands"].push_back(g["operands"][2]);
    EXPECT_SCHEDULE_ERROR(doc, "must index it by linalg.index of a batch loop");
  }
}

} // namespace
