//===- Schedule.cpp - The schedule's queries and entry points -------------===//
//
// parseSchedule() runs the parts in order: the file parser (JSON to the data
// model, entry by entry), the derived facts, then the whole-schedule rules
// (lib/Runtime/Schedule/).
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Schedule.h"

#include "Schedule/FileParser.h"
#include "Schedule/Verifier.h"

#include "wsc/Support/Error.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace wsc::rt {

using nlohmann::json;

int Schedule::paramIndex(const std::string &name) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == name)
      return static_cast<int>(i);
  return -1;
}

Shape Schedule::localShape(int id, int64_t localBatch) const {
  const ValueSpec &v = values.at(id);
  Shape s = v.shape;
  if (v.batchDim)
    s[*v.batchDim] = s[*v.batchDim] / globalBatch * localBatch;
  return s;
}

bool ValueSpec::isRaggedDim(int d) const {
  return ragged && std::find(ragged->dims.begin(), ragged->dims.end(), d) != ragged->dims.end();
}

Shape Schedule::sampleShape(int id, int64_t length) const {
  const ValueSpec &v = values.at(id);
  Shape s = v.shape;
  if (v.batchDim)
    s[*v.batchDim] /= globalBatch;
  if (v.ragged && vts)
    for (int d : v.ragged->dims)
      s[d] = s[d] / vts->masks.at(v.ragged->mask).seq * length;
  return s;
}

const char *phaseName(Phase p) { return schedule::stringify(p); }

int indexLoopOf(const std::vector<RegionOp> &ops, int value) {
  for (const RegionOp &op : ops)
    if (op.kind == ScalarOp::Index && op.results.size() == 1 && op.results[0] == value)
      return op.dim;
  return -1;
}

std::vector<BatchShard> shardBatch(int64_t batch, int systems) {
  if (systems < 1 || batch < 0)
    fail("internal: cannot shard a batch of ", batch, " over ", systems, " systems");
  std::vector<BatchShard> shards(systems);
  const int64_t base = batch / systems, extra = batch % systems;
  int64_t begin = 0;
  for (int k = 0; k < systems; ++k) {
    shards[k].begin = begin;
    shards[k].size = base + (k < extra ? 1 : 0);
    begin += shards[k].size;
  }
  return shards;
}

BatchShard microBatchOf(const BatchShard &shard, int64_t size, int64_t k) {
  const int64_t skip = std::min(shard.size, k * size);
  return {shard.begin + skip, std::min(size, shard.size - skip)};
}

int64_t Schedule::microBatches() const {
  if (!microBatchSize)
    return 1;
  const int64_t largest = (globalBatch + systems - 1) / systems; // the first shard
  return (largest + *microBatchSize - 1) / *microBatchSize;
}

Schedule parseSchedule(const std::string &text, const std::string &source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception &e) {
    std::string msg = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " tag.
    if (auto p = msg.find("] "); p != std::string::npos && msg[0] == '[')
      msg = msg.substr(p + 2);
    fail(source, ": invalid JSON: ", msg);
  }
  Schedule s = schedule_parser::parseDocument(doc, source);
  schedule_parser::deriveFacts(s);
  schedule_parser::verifySchedule(s);
  return s;
}

Schedule loadSchedule(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    fail(path, ": is a directory, not a schedule file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    fail(path, ": read error");
  return parseSchedule(ss.str(), path);
}

} // namespace wsc::rt
