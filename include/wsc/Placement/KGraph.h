//===- KGraph.h - the ISPD 2020 kernel graph format --------------*- C++ -*-===//
//
//   (* test=NAME width=633 height=633 wdeltat=1 wlength=1 wadapter=0 memlimit=24576 *)
//   input[0] n=[224 224 3] name='in'
//   conv[1] W=224 H=224 R=7 S=7 C=3 K=128 T=2 U=2 name='k1'
//   cblock[2] f=256 h=112 w=112 name='k2'
//   output[3] n=[56 56 256]
//   input[0]:y -> conv[1]:x, shape:[224][224][3]
//
// docs/LayerPipelined.md describes the format and our extensions.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_PLACEMENT_KGRAPH_H
#define WSC_PLACEMENT_KGRAPH_H

#include "wsc/Placement/Problem.h"

#include <string>
#include <string_view>
#include <vector>

namespace wsc::place {

struct KGraphNode {
  std::string kind;  ///< "input", "output" or a kernel kind's name
  int64_t index = 0; ///< the number in brackets
  int line = 0;
  bool isKernel = false;
  Kernel kernel;              ///< when isKernel
  std::vector<int64_t> shape; ///< n=[...] of input and output nodes
};

struct KGraphEdge {
  size_t from = 0, to = 0; ///< positions in KGraph::nodes
  std::string fromPort, toPort;
  std::vector<int64_t> shape; ///< empty when the line gives none
};

struct KGraph {
  std::string test;
  /// "file:line:col: warning: ..." for each inconsistency read past (never
  /// with KGraphOptions::strict, where each is an error).
  std::vector<std::string> warnings;
  Wafer wafer;
  double wDeltaT = 1.0, wLength = 1.0, wAdapter = 0.0;
  std::vector<KGraphNode> nodes;
  std::vector<KGraphEdge> edges;
};

struct KGraphOptions {
  /// The contest's files are read as published: a node naming itself twice
  /// keeps the last name, and an edge's shape annotation that is not its
  /// producer's output (a pooling or up-sampling between kernels, a typo) is
  /// read past; each gives a warning in KGraph::warnings. Strict makes both
  /// errors.
  bool strict = false;
};

/// Parses a kgraph. On any malformed line returns false with `error` as
/// "file:line:col: error: ...".
bool parseKGraph(std::string_view text, const std::string &file, KGraph &graph,
                 std::string &error, const KGraphOptions &options = {});
bool readKGraph(const std::string &path, KGraph &graph, std::string &error,
                const KGraphOptions &options = {});

/// The kernels (in node order) and the edges between two kernels.
Problem toProblem(const KGraph &graph);

/// Reads a whole file; false with "path: error: ..." if it cannot.
bool readFile(const std::string &path, std::string &text, std::string &error);

} // namespace wsc::place

#endif // WSC_PLACEMENT_KGRAPH_H
