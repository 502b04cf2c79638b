//===- ToolTest.cpp - wsc-place and wsc-place --check ---------------------===//
//
// Exit status 0 (success), 1 (bad input or illegal solution, with a message
// naming the file position or the kernel), 2 (usage); never a crash.
//
//===----------------------------------------------------------------------===//

#include "../ToolFixture.h"

#include <fstream>

namespace {

using wsc::test::slurp;
using Result = wsc::test::ToolResult;

std::string input(const std::string &name) {
  return std::string(WSC_PLACEMENT_INPUTS) + "/" + name + ".kgraph";
}

class PlaceTool : public wsc::test::ToolFixture {
protected:
  PlaceTool() : ToolFixture(WSC_PLACE_PATH) {}
};

TEST_F(PlaceTool, PlacesThenChecks) {
  Result placed = run(input("tiny") + " -o " + path("sol.txt") + " --svg " + path("tiny.svg"));
  ASSERT_EQ(placed.status, 0) << placed.err;
  EXPECT_NE(placed.err.find("delta_t: "), std::string::npos);
  EXPECT_NE(placed.err.find("place_seconds: "), std::string::npos);
  EXPECT_NE(slurp(path("tiny.svg")).find("</svg>"), std::string::npos);
  Result checked = run("--check " + input("tiny") + " " + path("sol.txt"));
  ASSERT_EQ(checked.status, 0) << checked.err;
  EXPECT_NE(checked.out.find("test: tiny\nkernels: 3\ndelta_t: "), std::string::npos);
  EXPECT_NE(checked.out.find("lower_bound: "), std::string::npos);
  // Each term of the objective, the contest's score, and the total with
  // adapters (tiny weighs them 0).
  EXPECT_NE(checked.out.find("\nwirelength: "), std::string::npos);
  EXPECT_NE(checked.out.find("\nadapter: "), std::string::npos);
  EXPECT_NE(checked.out.find("\nscore: "), std::string::npos);
  EXPECT_NE(checked.out.find("\nweighted_total: "), std::string::npos);
  EXPECT_NE(checked.out.find("delta_t/lower_bound: "), std::string::npos);
}

TEST_F(PlaceTool, SolutionOnStdoutWithoutDashO) {
  Result r = run(input("tiny") + " --time-limit 5");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("k1 = conv( 16 16 32 64 3 3 1 1 ", 0), 0u) << r.out;
}

TEST_F(PlaceTool, CheckNamesTheOffendingKernel) {
  // k1 at (0,0): h=w=1 c=32 k=64 is 1*1*33 rows x 192 columns > 60.
  write("bad.txt", "k1 = conv( 16 16 32 64 3 3 1 1 1 1 32 64 )\n"
                   "k2 = dblock( 16 16 64 1 1 1 1 1 1 1 1 )\n"
                   "k3 = cblock( 16 16 128 1 1 1 1 1 1 1 1 1 1 )\n"
                   "k1 : place(0 0 R0)\nk2 : place(0 0 R0)\nk3 : place(40 50 R0)\n");
  Result r = run("--check " + input("tiny") + " " + path("bad.txt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(path("bad.txt") + ": error: kernel k1 (conv): covers [0, 192) x [0, 33), "
                                         "outside the 60x60 wafer"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("kernels k1 and k2 overlap"), std::string::npos) << r.err;
  // All 1s leave k3's strided 3x3 holding 32*32*9 weights and more.
  EXPECT_NE(r.err.find("kernel k3 (cblock): needs 40960 words per PE, above memlimit 24576"),
            std::string::npos)
      << r.err;
}

TEST_F(PlaceTool, MalformedInputsFailWithPositions) {
  write("bad.kgraph", "(* width=60 height=60 memlimit=100 *)\nconv[1] W=4 H=4\n");
  Result r = run(path("bad.kgraph"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, path("bad.kgraph") + ":2:1: error: conv[1] lacks C, K, R, S, T, U\n");
  write("sol.txt", "k1 = conv( 16 16 32 64 3 3 1 1 1 1 1 )\n");
  r = run("--check " + input("tiny") + " " + path("sol.txt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, path("sol.txt") + ":1:38: error: conv takes 12 args (8 formal, 4 execution), got 11\n");
  r = run(path("missing.kgraph"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, path("missing.kgraph") + ": error: cannot read: No such file or directory\n");
}

// A file in the contest's published style places, with a located warning per
// inconsistency; --strict refuses it at the first.
TEST_F(PlaceTool, ContestStyleWarnsAndStrictRefuses) {
  Result r = run(input("contest_style") + " -o " + path("sol.txt") + " --time-limit 5");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string file = input("contest_style");
  EXPECT_NE(r.err.find(file + ":19:33: warning: input[0] gives name twice ('x', then 'k0'); "
                              "using 'k0'\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(file + ":25:33: warning: output[6] gives name twice"), std::string::npos);
  EXPECT_NE(r.err.find(file + ":29:25: warning: shape [14][14][128] does not match conv[1]'s "
                              "output [28][28][128] (as if pooled 2x2"),
            std::string::npos);
  EXPECT_NE(r.err.find(file + ":31:25: warning: shape [14][14][512] does not match conv[3]'s "
                              "output [7][7][512]; using conv[3]'s output"),
            std::string::npos);
  Result checked = run("--check " + file + " " + path("sol.txt"));
  EXPECT_EQ(checked.status, 0) << checked.err;
  EXPECT_NE(checked.err.find("warning: input[0] gives name twice"), std::string::npos);

  Result strict = run("--strict " + file + " -o " + path("strict.txt"));
  EXPECT_EQ(strict.status, 1);
  EXPECT_EQ(strict.err, file + ":19:33: error: input[0] gives name twice\n");
  write("shape.kgraph", "(* width=60 height=60 memlimit=24576 *)\n"
                        "conv[1] W=8 H=8 R=1 S=1 C=4 K=4 T=2 U=2\n"
                        "conv[2] W=4 H=4 R=1 S=1 C=4 K=4 T=1 U=1\n"
                        "conv[1]:y -> conv[2]:x, shape:[8][8][4]\n");
  strict = run("--strict " + path("shape.kgraph"));
  EXPECT_EQ(strict.status, 1);
  EXPECT_EQ(strict.err, path("shape.kgraph") +
                            ":4:25: error: shape [8][8][4] does not match conv[1]'s output [4][4][4]\n");
  EXPECT_EQ(run("--check --strict " + file + " " + path("sol.txt")).status, 1);
}

TEST_F(PlaceTool, InfeasibleGraph) {
  write("big.kgraph", "(* width=8 height=8 memlimit=10 *)\nconv[1] W=8 H=8 R=3 S=3 C=64 K=64 T=1 U=1\n");
  Result r = run(path("big.kgraph"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, path("big.kgraph") +
                       ": error: kernel k1 (conv) fits no rectangle of the 8x8 wafer within "
                       "memlimit 10 words\n");
}

TEST_F(PlaceTool, Usage) {
  EXPECT_EQ(run("").status, 2);
  EXPECT_EQ(run("a b").status, 2);
  EXPECT_EQ(run("--check a").status, 2);
  EXPECT_EQ(run(input("tiny") + " --time-limit 0").status, 2);
  EXPECT_EQ(run(input("tiny") + " --time-limit").status, 2);
  EXPECT_EQ(run(input("tiny") + " --frobnicate").status, 2);
  Result r = run("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("usage: wsc-place"), std::string::npos);
}

} // namespace
