//===- KGraphTest.cpp - the kgraph parser accepts and rejects -------------===//

#include "wsc/Placement/KGraph.h"

#include <gtest/gtest.h>

using namespace wsc::place;

namespace {

const char *kHeader =
    "(* test=t width=100 height=80 wdeltat=2 wlength=0.5 wadapter=0 memlimit=24576 *)\n";

/// "" on success, else the parser's message.
std::string parseError(const std::string &text) {
  KGraph g;
  std::string error;
  return parseKGraph(text, "g.kgraph", g, error) ? "" : error;
}

std::string withHeader(const std::string &body) { return kHeader + body; }

const char *kConsistent = "input[0] n=[4 4 8]\ndblock[1] f=8 h=4 w=4\n"
                          "input[0]:y -> dblock[1]:x, shape:[4][4][8]\n";

TEST(KGraph, ParsesNodesEdgesAndHeader) {
  std::string text = withHeader("input[0] n=[14 14 1024] name='in'\n"
                                "cblock[ 1] f=2048 h=14 w=14 name='k1'\n"
                                "dblock[5] f=2048 h=7 w=7\n"
                                "conv[2] W=7 H=7 R=3 S=3 C=2048 K=512 T=1 U=1 name='k2'\n"
                                "output[17] n=[7 7 512]\n"
                                "input[0]:y -> cblock[ 1]:x, shape:[14][14][1024]\n"
                                "cblock[1]:y -> dblock[ 5]:x, shape:[7][7][2048]\n"
                                "dblock[5]:y -> conv[2]:x\n"
                                "conv[2]:y -> output[17]:x, shape:[7][7][512]\n");
  KGraph g;
  std::string error;
  ASSERT_TRUE(parseKGraph(text, "g.kgraph", g, error)) << error;
  EXPECT_EQ(g.test, "t");
  EXPECT_EQ(g.wafer.width, 100);
  EXPECT_EQ(g.wafer.height, 80);
  EXPECT_EQ(g.wafer.memLimit, 24576);
  EXPECT_DOUBLE_EQ(g.wDeltaT, 2.0);
  EXPECT_DOUBLE_EQ(g.wLength, 0.5);
  ASSERT_EQ(g.nodes.size(), 5u);
  EXPECT_EQ(g.nodes[1].kernel.formal, (std::vector<int64_t>{14, 14, 2048}));
  EXPECT_EQ(g.nodes[2].kernel.name, "k5"); // default name
  EXPECT_EQ(g.nodes[3].kernel.formal, (std::vector<int64_t>{7, 7, 2048, 512, 3, 3, 1, 1}));
  ASSERT_EQ(g.edges.size(), 4u);
  EXPECT_EQ(g.edges[1].shape, (std::vector<int64_t>{7, 7, 2048}));
  Problem p = toProblem(g);
  ASSERT_EQ(p.kernels.size(), 3u);
  EXPECT_EQ(p.edges, (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}}));
  EXPECT_DOUBLE_EQ(p.wDeltaT, 2.0);
}

TEST(KGraph, MultiLineHeaderAndComments) {
  std::string text = "(*\n  test=t\n  width=10\n  height=10\n  memlimit=100\n*)\n"
                     "(* free text after the header *)\n"
                     "conv[1] W=4 H=4 R=1 S=1 C=4 K=4 T=1 U=1 (* trailing *)\n";
  KGraph g;
  std::string error;
  ASSERT_TRUE(parseKGraph(text, "g.kgraph", g, error)) << error;
  EXPECT_EQ(g.wafer.memLimit, 100);
  EXPECT_DOUBLE_EQ(g.wDeltaT, 1.0);
}

TEST(KGraph, ExtensionKinds) {
  EXPECT_EQ(parseError(withHeader("matmul[1] M=128 K=512 N=512\n"
                                  "attention[2] L=128 D=64 A=8\n"
                                  "norm[3] N=128 F=512\n"
                                  "eltwise[4] E=65536 OPS=1\n"
                                  "matmul[1]:y -> attention[2]:x, shape:[128][512]\n")),
            "");
}

TEST(KGraph, ExampleInputsParse) {
  for (const char *name :
       {"tiny", "resnet50_blocks", "resnet50_convs", "transformer", "contest_style"}) {
    KGraph g;
    std::string error;
    EXPECT_TRUE(readKGraph(std::string(WSC_PLACEMENT_INPUTS) + "/" + name + ".kgraph", g, error))
        << error;
  }
}

// The contest's files as published: a name given twice, an edge annotated
// with its strided producer's input size, a pooling between two kernels.
// Each is read past with a located warning saying what was used.
TEST(KGraph, ContestInconsistenciesAreWarnings) {
  std::string text = withHeader("input[ 0] n=[28 28 64] name='x' name='k0'\n"
                                "conv[1] W=28 H=28 R=3 S=3 C=64 K=128 T=1 U=1 name='a' name='k1'\n"
                                "conv[2] W=14 H=14 R=3 S=3 C=128 K=256 T=2 U=2 name='k2'\n"
                                "conv[3] W=7 H=7 R=1 S=1 C=256 K=256 T=1 U=1 name='k3'\n"
                                "input[ 0]:_\t->\tconv[1]:x, shape:[28][28][64]\n"
                                "conv[1]:y\t->\tconv[2]:x, shape:[14][14][128]\n"
                                "conv[2]:y\t->\tconv[3]:x, shape:[14][14][256]\n");
  KGraph g;
  std::string error;
  ASSERT_TRUE(parseKGraph(text, "g.kgraph", g, error)) << error;
  EXPECT_EQ(g.warnings,
            (std::vector<std::string>{
                "g.kgraph:2:33: warning: input[0] gives name twice ('x', then 'k0'); using 'k0'",
                "g.kgraph:3:55: warning: conv[1] gives name twice ('a', then 'k1'); using 'k1'",
                "g.kgraph:7:25: warning: shape [14][14][128] does not match conv[1]'s output "
                "[28][28][128] (as if pooled 2x2 between the kernels: the graph has no kernel "
                "for it); using conv[1]'s output (the kernels' formal arguments decide their work)",
                "g.kgraph:8:25: warning: shape [14][14][256] does not match conv[2]'s output "
                "[7][7][256]; using conv[2]'s output (the kernels' formal arguments decide their "
                "work)"}));
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[1].kernel.name, "k1");
  // The graph is what the kernels say: three kernels in a chain.
  Problem p = toProblem(g);
  EXPECT_EQ(p.edges, (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}}));
  // A consistent graph gives no warnings.
  ASSERT_TRUE(parseKGraph(withHeader(kConsistent), "g.kgraph", g, error)) << error;
  EXPECT_TRUE(g.warnings.empty());
}

// --strict keeps the format's own rules as errors.
TEST(KGraph, StrictRefusesWhatTheContestFilesDo) {
  KGraphOptions strict;
  strict.strict = true;
  KGraph g;
  std::string error;
  EXPECT_FALSE(parseKGraph(withHeader("input[ 0] n=[4 4 8] name='x' name='k0'\n"), "g.kgraph", g,
                           error, strict));
  EXPECT_EQ(error, "g.kgraph:2:30: error: input[0] gives name twice");
  EXPECT_FALSE(parseKGraph(withHeader("input[0] n=[4 4 8]\ndblock[1] f=8 h=4 w=4\n"
                                      "input[0]:y -> dblock[1]:x, shape:[4][4][4]\n"),
                           "g.kgraph", g, error, strict));
  EXPECT_EQ(error,
            "g.kgraph:4:28: error: shape [4][4][4] does not match input[0]'s output [4][4][8]");
  EXPECT_FALSE(parseKGraph(withHeader("conv[1] W=8 H=8 R=1 S=1 C=4 K=4 T=1 U=1\n"
                                      "conv[2] W=8 H=8 R=1 S=1 C=4 K=4 T=1 U=1\n"
                                      "conv[1]:y -> conv[2]:x, shape:[4][4][4]\n"),
                           "g.kgraph", g, error, strict));
  EXPECT_EQ(error,
            "g.kgraph:4:25: error: shape [4][4][4] does not match conv[1]'s output [8][8][4]");
  // Repeating any other key stays an error in both modes.
  EXPECT_FALSE(parseKGraph(withHeader("input[ 0] n=[4 4 8] n=[4 4 8]\n"), "g.kgraph", g, error));
  EXPECT_EQ(error, "g.kgraph:2:21: error: input[0] gives n twice");
}

struct Bad {
  std::string text;
  std::string message;
};
void PrintTo(const Bad &bad, std::ostream *os) { *os << bad.message; }

class KGraphRejects : public ::testing::TestWithParam<Bad> {};

TEST_P(KGraphRejects, WithLineAndColumn) { EXPECT_EQ(parseError(GetParam().text), GetParam().message); }

const std::string kConv = "conv[1] W=4 H=4 R=1 S=1 C=4 K=4 T=1 U=1\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, KGraphRejects,
    ::testing::Values(
        Bad{kConv, "g.kgraph:1:1: error: the header comment gives no width= (expected (* "
                   "test=NAME width=W height=H wdeltat=A wlength=B wadapter=C memlimit=M *))"},
        Bad{"(* width=10 height=10 *)\n", "g.kgraph:1:1: error: the header comment gives no "
                                          "memlimit= (expected (* test=NAME width=W height=H "
                                          "wdeltat=A wlength=B wadapter=C memlimit=M *))"},
        Bad{"(* width=10 height=10 memlimit=5 colour=red *)\n",
            "g.kgraph:1:34: error: unknown header key 'colour' (expected test, width, height, "
            "wdeltat, wlength, wadapter, memlimit)"},
        Bad{"(* width=10 height=ten memlimit=5 *)\n",
            "g.kgraph:1:20: error: height must be an integer in [1, 4096], got 'ten'"},
        Bad{"(* width=10 height=10 memlimit=5 wlength=-1 *)\n",
            "g.kgraph:1:42: error: wlength must be a non-negative number, got '-1'"},
        Bad{"(*\n width=10\n width=10 *)\n", "g.kgraph:3:2: error: header key 'width' given twice"},
        Bad{"(* width=10 height=10\n memlimit *)\n",
            "g.kgraph:2:2: error: expected key=value in the header comment, got 'memlimit'"},
        Bad{"(* width=10 height=10 memlimit=5\n", "g.kgraph:1:1: error: unterminated comment: no "
                                                   "closing '*)'"},
        Bad{withHeader("pool[1] k=2\n"),
            "g.kgraph:2:1: error: unknown node kind 'pool' (expected input, output, conv, dblock, "
            "cblock, matmul, attention, norm, eltwise)"},
        Bad{withHeader("conv[1] W=4 H=4 R=1 S=1 C=4 K=4 T=1\n"), "g.kgraph:2:1: error: conv[1] lacks U"},
        Bad{withHeader("conv[1] W=4 H=4 W=4\n"), "g.kgraph:2:17: error: conv[1] gives W twice"},
        Bad{withHeader("dblock[1] f=8 h=4 w=4 x=1\n"),
            "g.kgraph:2:23: error: unknown key 'x' for dblock (expected h, w, f, name)"},
        Bad{withHeader("dblock[1] f=6 h=4 w=4\n"),
            "g.kgraph:2:1: error: dblock[1]: F = 6 is not a multiple of 4"},
        Bad{withHeader("dblock[1] f=0 h=4 w=4\n"), "g.kgraph:2:13: error: f must be positive, got 0"},
        Bad{withHeader("dblock[1] f=8 h=4 w=4.5\n"),
            "g.kgraph:2:21: error: expected an integer w, got number 4.5"},
        Bad{withHeader("dblock[1] f=8 h=4 w=4x\n"), "g.kgraph:2:21: error: malformed number '4x'"},
        Bad{withHeader("dblock[-1] f=8 h=4 w=4\n"), "g.kgraph:2:1: error: node index -1 is negative"},
        Bad{withHeader("dblock[1 f=8 h=4 w=4\n"), "g.kgraph:2:10: error: expected ']', got 'f'"},
        Bad{withHeader("dblock[1] f=8 h=4 w=4 name=k1\n"),
            "g.kgraph:2:28: error: name must be a quoted identifier like 'k1', got 'k1'"},
        Bad{withHeader("dblock[1] f=8 h=4 w=4 name='a b'\n"),
            "g.kgraph:2:28: error: name must be a quoted identifier like 'k1', got string 'a b'"},
        Bad{withHeader("dblock[1] f=8 h=4 w=4 name='k1\n"),
            "g.kgraph:2:28: error: unterminated string: no closing '''"},
        Bad{withHeader("dblock[1] f=8 h=4 w=4\ndblock[1] f=8 h=4 w=4\n"),
            "g.kgraph:3:1: error: dblock[1] is declared twice (first at line 2)"},
        Bad{withHeader("dblock[1] f=8 h=4 w=4 name='a'\ndblock[2] f=8 h=4 w=4 name='a'\n"),
            "g.kgraph:3:1: error: dblock[2] is named 'a', like line 2; give it a unique name='...'"},
        Bad{withHeader("input[0] n=[]\n"),
            "g.kgraph:2:13: error: expected at least one dimension in n=[...]"},
        Bad{withHeader("input[0] n=[4 4 8] @\n"), "g.kgraph:2:20: error: unexpected character '@'"},
        Bad{withHeader("input[0] n=[4 4 8]\ndblock[1]:y -> input[0]:x\n"),
            "g.kgraph:3:1: error: connection names dblock[1], which is not declared above"},
        Bad{withHeader("input[0] n=[4 4 8]\ndblock[1] f=8 h=4 w=4\ninput[0]:y dblock[1]:x\n"),
            "g.kgraph:4:12: error: expected '->', got 'dblock'"},
        Bad{withHeader("input[0] n=[4 4 8]\ndblock[1] f=8 h=4 w=4\n"
                       "input[0]:y -> dblock[1]:x, shape:[4 4 8]\n"),
            "g.kgraph:4:28: error: write each shape dimension in its own brackets: [7][7][2048]"},
        Bad{withHeader("input[0] n=[4 4 8]\ndblock[1] f=8 h=4 w=4\n"
                       "input[0]:y -> dblock[1]:x, size:[4][4][8]\n"),
            "g.kgraph:4:28: error: expected 'shape', got 'size'"},
        Bad{withHeader("input[0] n=[4 4 8]\ndblock[1] f=8 h=4 w=4\n"
                       "input[0]:y -> dblock[1]:x extra\n"),
            "g.kgraph:4:27: error: expected end of line, got 'extra'"},
        Bad{withHeader("input[0] n=[4 4 8]\ndblock[1] f=8 h=4 w=4\n"
                       "dblock[1]:y -> input[0]:x\n"),
            "g.kgraph:4:16: error: an input node cannot be the target of a connection"},
        Bad{withHeader("output[0] n=[4 4 8]\ndblock[1] f=8 h=4 w=4\n"
                       "output[0]:y -> dblock[1]:x\n"),
            "g.kgraph:4:1: error: an output node cannot be the source of a connection"},
        Bad{withHeader("dblock[1] f=8 h=4 w=4\ndblock[1]:y -> dblock[1]:x\n"),
            "g.kgraph:3:16: error: a node cannot connect to itself"},
        Bad{withHeader("dblock[1] f=8 h=4 w=4\ndblock[2] f=8 h=4 w=4\n"
                       "dblock[1]:y -> dblock[2]:x\ndblock[1]:y -> dblock[2]:x\n"),
            "g.kgraph:5:1: error: this connection is given twice"}));

} // namespace
