//===- LoopBounds.cpp - Infer and check linalg loop bounds ----------------===//

#include "LoopBounds.h"

#include "wsc/Support/Error.h"

namespace wsc::rt {

std::vector<int64_t> inferLoopBounds(const std::vector<AffineMap> &maps, int numLoops,
                                     const std::vector<Shape> &shapes,
                                     const std::string &where) {
  if (maps.size() != shapes.size())
    fail(where, ": ", maps.size(), " indexing maps for ", shapes.size(), " operands");
  std::vector<int64_t> ext(numLoops, -1);
  std::vector<std::pair<size_t, size_t>> from(numLoops);
  for (size_t m = 0; m < maps.size(); ++m) {
    if (maps[m].size() != shapes[m].size())
      fail(where, ": operand ", m, " has rank ", shapes[m].size(), " but its indexing map has ",
           maps[m].size(), " results");
    for (size_t j = 0; j < maps[m].size(); ++j) {
      const AffineExpr &e = maps[m][j];
      if (!e.isDim())
        continue;
      const int d = e.terms[0].first;
      if (ext[d] < 0) {
        ext[d] = shapes[m][j];
        from[d] = {m, j};
      } else if (ext[d] != shapes[m][j]) {
        fail(where, ": shape mismatch: loop d", d, " has extent ", ext[d], " from operand ",
             from[d].first, " dim ", from[d].second, " but operand ", m, " dim ", j,
             " has size ", shapes[m][j]);
      }
    }
  }
  for (int d = 0; d < numLoops; ++d)
    if (ext[d] < 0)
      fail(where, ": cannot infer the extent of loop d", d,
           " (no operand dimension is indexed by d", d, " alone)");
  for (int d = 0; d < numLoops; ++d)
    if (ext[d] == 0)
      return ext; // an empty iteration space accesses nothing
  for (size_t m = 0; m < maps.size(); ++m)
    for (size_t j = 0; j < maps[m].size(); ++j) {
      const AffineExpr &e = maps[m][j];
      __int128 lo = e.constant, hi = e.constant;
      for (auto [d, c] : e.terms) {
        __int128 span = static_cast<__int128>(c) * (ext[d] - 1);
        (c > 0 ? hi : lo) += span;
      }
      if (lo < 0 || hi >= shapes[m][j])
        fail(where, ": operand ", m, " dim ", j, " (size ", shapes[m][j],
             ") is accessed at indices [", static_cast<long long>(lo), ", ",
             static_cast<long long>(hi), "]");
    }
  return ext;
}

} // namespace wsc::rt
