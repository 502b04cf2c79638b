//===- RankTrace.cpp - Measured wall time per rank beside the model -------===//

#include "wsc/Runtime/MpiJob.h"

#include <nlohmann/json.hpp>

#include <set>

namespace wsc::rt {

nlohmann::json traceWithRankWalls(const std::string &modeledTrace,
                                  const std::vector<RankStepWall> &walls) {
  using nlohmann::json;
  // A process id past the modeled ones (MemoryX 0, systems 1..16).
  constexpr int kWallPid = 1000;
  json doc = json::parse(modeledTrace);
  json &events = doc["traceEvents"];
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", kWallPid},
                    {"args", {{"name", "measured wall time (MPI ranks)"}}}});
  std::set<int> ranks;
  for (const RankStepWall &w : walls)
    if (ranks.insert(w.rank).second)
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", kWallPid},
                        {"tid", w.rank},
                        {"args", {{"name", "rank " + std::to_string(w.rank)}}}});
  for (const RankStepWall &w : walls)
    events.push_back({{"name", "step " + std::to_string(w.step)},
                      {"cat", "wall"},
                      {"ph", "X"},
                      {"ts", w.startS * 1e6},
                      {"dur", w.wallS * 1e6},
                      {"pid", kWallPid},
                      {"tid", w.rank},
                      {"args", {{"step", w.step}, {"rank", w.rank}}}});
  return doc;
}

} // namespace wsc::rt
