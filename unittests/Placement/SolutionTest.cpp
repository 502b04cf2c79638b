//===- SolutionTest.cpp - the solution reader and writer ------------------===//

#include "wsc/Placement/Solution.h"

#include <gtest/gtest.h>

using namespace wsc::place;

namespace {

Problem twoKernels() {
  Problem p;
  p.kernels.push_back({"k1", KernelKind::Conv, {14, 14, 512, 512, 3, 3, 2, 2}});
  p.kernels.push_back({"k2", KernelKind::DBlock, {7, 7, 2048}});
  p.edges = {{0, 1}};
  return p;
}

const char *kGood = "k1 = conv( 14 14 512 512 3 3 2 2 2 7 8 16 )\n"
                    "k2 = dblock( 7 7 2048 1 7 16 8 8 32 16 64 )\n"
                    "k1 : place(0 0 R0)\n"
                    "k2 : place(48 0 R90)\n";

std::string parseError(const std::string &text) {
  Placement pl;
  std::string error;
  return parseSolution(text, "s.txt", twoKernels(), pl, error) ? "" : error;
}

TEST(Solution, Parses) {
  Placement pl;
  std::string error;
  ASSERT_TRUE(parseSolution(kGood, "s.txt", twoKernels(), pl, error)) << error;
  ASSERT_EQ(pl.kernels.size(), 2u);
  EXPECT_EQ(pl.kernels[0].exec, (std::vector<int64_t>{2, 7, 8, 16}));
  EXPECT_EQ(pl.kernels[1].x, 48);
  EXPECT_EQ(pl.kernels[1].orient, Orientation::R90);
}

TEST(Solution, AnyOrderAndComments) {
  EXPECT_EQ(parseError("(* placed by hand *)\nk2 : place( 48 0 R90 )\n\n"
                       "k1 = conv(14 14 512 512 3 3 2 2 2 7 8 16)\nk1 : place(0 0 R0)\n"
                       "k2 = dblock( 7 7 2048 1 7 16 8 8 32 16 64 )"),
            "");
}

TEST(Solution, WriteThenReadRoundTrips) {
  Problem p = twoKernels();
  Placement pl;
  std::string error;
  ASSERT_TRUE(parseSolution(kGood, "s.txt", p, pl, error));
  std::string text = writeSolution(p, pl);
  EXPECT_EQ(text, "k1 = conv( 14 14 512 512 3 3 2 2 2 7 8 16 )\n"
                  "k2 = dblock( 7 7 2048 1 7 16 8 8 32 16 64 )\n"
                  "k1 : place(0 0 R0)\n"
                  "k2 : place(48 0 R90)\n");
  Placement again;
  ASSERT_TRUE(parseSolution(text, "s.txt", p, again, error)) << error;
  EXPECT_EQ(writeSolution(p, again), text);
}

struct Bad {
  std::string text;
  std::string message;
};
void PrintTo(const Bad &bad, std::ostream *os) { *os << bad.message; }

class SolutionRejects : public ::testing::TestWithParam<Bad> {};

TEST_P(SolutionRejects, WithLineAndColumn) {
  EXPECT_EQ(parseError(GetParam().text), GetParam().message);
}

const std::string kK2 = "k2 = dblock( 7 7 2048 1 7 16 8 8 32 16 64 )\nk2 : place(48 0 R90)\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, SolutionRejects,
    ::testing::Values(
        Bad{"k9 = conv( 1 )\n", "s.txt:1:1: error: no kernel named 'k9' in the graph"},
        Bad{"k1 = dblock( 1 )\n", "s.txt:1:6: error: kernel k1 is a conv in the graph, not a dblock"},
        Bad{"k1 = conv( 14 14 256 512 3 3 2 2 2 7 8 16 )\n",
            "s.txt:1:18: error: kernel k1: formal arg C = 256 differs from the graph's 512"},
        Bad{"k1 = conv( 14 14 512 512 3 3 2 2 2 7 8 )\n",
            "s.txt:1:40: error: conv takes 12 args (8 formal, 4 execution), got 11"},
        Bad{"k1 = conv( 14 14 512 512 3 3 2 2 2 7 8 16 1 )\n",
            "s.txt:1:43: error: conv takes 12 args, expected ')', got number 1"},
        Bad{"k1 = conv( 14 14 512 512 3 3 2 2 2 7 x 16 )\n",
            "s.txt:1:38: error: expected an integer c, got 'x'"},
        Bad{"k1 = conv 14\n", "s.txt:1:11: error: expected '(', got number 14"},
        Bad{"k1 place(0 0 R0)\n", "s.txt:1:4: error: expected '=' or ':' after 'k1', got 'place'"},
        Bad{"k1 : put(0 0 R0)\n", "s.txt:1:6: error: expected 'place', got 'put'"},
        Bad{"k1 : place(0 0 R180)\n", "s.txt:1:16: error: orientation must be R0 or R90, got 'R180'"},
        Bad{"k1 : place(0 R0)\n", "s.txt:1:14: error: expected an integer y, got 'R0'"},
        Bad{"k1 : place(0 0 R0) k2\n", "s.txt:1:20: error: expected end of line, got 'k2'"},
        Bad{"k1 : place(0 0 R0)\nk1 : place(1 1 R0)\n",
            "s.txt:2:1: error: kernel k1 is placed twice (first at line 1)"},
        Bad{"k1 = conv( 14 14 512 512 3 3 2 2 2 7 8 16 )\nk1 = conv( 14 14 512 512 3 3 2 2 2 7 8 16 )\n",
            "s.txt:2:1: error: kernel k1 is defined twice (first at line 1)"},
        Bad{"k1 = conv( 14 14 512 512 3 3 2 2 2 7 8 16 )\n" + kK2,
            "s.txt: error: kernel k1 is never placed (no 'k1 : place(x y R0)' line)"},
        Bad{"k1 : place(0 0 R0)\n" + kK2,
            "s.txt: error: kernel k1 is never defined (no 'k1 = kind( ... )' line)"},
        Bad{"k1 # 1\n", "s.txt:1:4: error: unexpected character '#'"}));

} // namespace
