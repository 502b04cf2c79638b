//===- TextualIRGuardTest.cpp - the scan for MLIR parser crashes ----------===//

#include "wsc/Support/TextualIRGuard.h"

#include <gtest/gtest.h>

using namespace wsc;

namespace {

const char *kTranspose = R"(func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = PERM
  return %t : tensor<3x2xf32>
}
)";

std::string withPermutation(const std::string &perm) {
  std::string text = kTranspose;
  return text.replace(text.find("PERM"), 4, perm);
}

std::string blobWithAlignment(const std::string &prefix) {
  return "func.func @f() -> tensor<1xf32> {\n"
         "  %c = arith.constant dense_resource<b> : tensor<1xf32>\n"
         "  return %c : tensor<1xf32>\n}\n"
         "{-#\n  dialect_resources: {\n    builtin: {\n      b: \"0x" +
         prefix + "0000803F\"\n    }\n  }\n#-}\n";
}

TEST(TextualIRGuard, AcceptsWellFormedIR) {
  EXPECT_FALSE(findTextualIRHazard(withPermutation("[1, 0]")));
  EXPECT_FALSE(findTextualIRHazard(withPermutation("[]")));
  // The extremes of int64 parse (the op's verifier refuses them).
  EXPECT_FALSE(findTextualIRHazard(withPermutation("[9223372036854775807, -9223372036854775808]")));
  EXPECT_FALSE(findTextualIRHazard(blobWithAlignment("04000000")));
  // Brackets inside strings and comments do not count.
  EXPECT_FALSE(findTextualIRHazard("// a ( comment [\nfunc.func @g() attributes {s = \"(]\"} {\n"
                                   "  return\n}\n"));
  // Generic form: the key is in a property dictionary, any attribute goes.
  EXPECT_FALSE(findTextualIRHazard(
      "%t = \"linalg.transpose\"(%a, %b) <{permutation = array<i64: 1, 0>}> : () -> ()\n"));
  EXPECT_FALSE(findTextualIRHazard("ML\xEFR\x01 binary ((( bytecode"));
}

TEST(TextualIRGuard, RefusesMalformedPermutationAtItsValue) {
  for (const char *perm : {"[1", "[1, x]", "5", "[1 0]", "array<i64: 1, 0>",
                           "[18446744073709551616, 0]", "[9223372036854775808, 0]",
                           "[-9223372036854775809]"}) {
    auto hazard = findTextualIRHazard(withPermutation(perm));
    ASSERT_TRUE(hazard) << perm;
    EXPECT_EQ(hazard->line, 2u) << perm;
    EXPECT_EQ(hazard->column, 92u) << perm; // where the value starts
    EXPECT_EQ(hazard->message, "'permutation' must be a list of 64-bit integers such as [1, 0]");
  }
  auto dims = findTextualIRHazard("%t = linalg.broadcast ins(%a : tensor<3xf32>) outs(%b : "
                                  "tensor<2x3xf32>) dimensions = [0 x]\n");
  ASSERT_TRUE(dims);
  EXPECT_EQ(dims->message, "'dimensions' must be a list of 64-bit integers such as [1, 0]");
}

TEST(TextualIRGuard, RefusesZeroOrNonPowerOfTwoBlobAlignment) {
  auto zero = findTextualIRHazard(blobWithAlignment("00000000"));
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->line, 8u);
  EXPECT_EQ(zero->column, 10u);
  EXPECT_EQ(zero->message, "resource blob's alignment (its first 4 bytes, little-endian) is 0; "
                           "it must be a power of two");
  auto three = findTextualIRHazard(blobWithAlignment("03000000"));
  ASSERT_TRUE(three);
  EXPECT_NE(three->message.find("is 3;"), std::string::npos);
  // Little-endian: 00000100 is 65536, a power of two.
  EXPECT_FALSE(findTextualIRHazard(blobWithAlignment("00000100")));
  // The same string outside the metadata section is an ordinary string.
  EXPECT_FALSE(findTextualIRHazard("func.func @f() attributes {s = \"0x000000000000\"}\n"));
}

TEST(TextualIRGuard, RefusesDeepNestingAtTheLevelOverTheLimit) {
  std::string deep = "%c = arith.constant dense<" + std::string(30000, '[') + "1.0" +
                     std::string(30000, ']') + "> : tensor<1xf32>\n";
  auto hazard = findTextualIRHazard(deep);
  ASSERT_TRUE(hazard);
  EXPECT_EQ(hazard->line, 1u);
  EXPECT_EQ(hazard->column, 27u + kMaxTextualIRNesting);
  EXPECT_EQ(hazard->message, "brackets nest deeper than 1000 levels");
  std::string fine = "%c = arith.constant dense<" + std::string(kMaxTextualIRNesting, '[') +
                     std::string(kMaxTextualIRNesting, ']') + ">\n";
  EXPECT_FALSE(findTextualIRHazard(fine));
}

TEST(TextualIRGuard, RefusesMismatchedAndUnclosedBrackets) {
  auto mismatch = findTextualIRHazard("func.func @f() {\n  %x = foo [1, 2}\n");
  ASSERT_TRUE(mismatch);
  EXPECT_EQ(mismatch->line, 2u);
  EXPECT_EQ(mismatch->column, 17u);
  EXPECT_EQ(mismatch->message, "'}' does not close the '[' opened at line 2, column 12");
  auto cut = findTextualIRHazard("func.func @f() {\n  return\n");
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->line, 1u);
  EXPECT_EQ(cut->column, 16u);
  EXPECT_EQ(cut->message, "'{' is never closed (is the input cut off?)");
  // A stray closer is MLIR's to report.
  EXPECT_FALSE(findTextualIRHazard("}\n"));
}

TEST(TextualIRGuard, CountsLinesAndColumnsPastComments) {
  // Comment lines are skipped whole; what follows keeps its place.
  auto mismatch = findTextualIRHazard("// one\n// two ( [\nfunc.func @a() {\n  [}\n");
  ASSERT_TRUE(mismatch);
  EXPECT_EQ(mismatch->line, 4u);
  EXPECT_EQ(mismatch->column, 4u);
  // A comment that ends the input without a newline.
  auto cut = findTextualIRHazard("func.func @a() {\n// no newline at the end");
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->line, 1u);
  EXPECT_EQ(cut->column, 16u);
}

TEST(TextualIRGuard, MatchesEachSplitOfTheInputOnItsOwn) {
  // -split-input-file parses each part alone: a part's open bracket does
  // not carry into the next, and its closers are not refused there.
  EXPECT_FALSE(findTextualIRHazard("func.func @a() {\n// -----\n}\nfunc.func @b() {\n}\n"));
  auto second = findTextualIRHazard("func.func @a() {\n}\n// -----\nfunc.func @b() {\n  [}\n");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->line, 5u);
}

TEST(TextualIRGuard, RefusesABlockDefinedTwiceInOneRegion) {
  const char *twice = "func.func @f() {\n"
                      "  \"test.op\"() ({\n"
                      "  ^bb0:\n"
                      "    \"test.a\"() : () -> ()\n"
                      "  ^bb0(%x: f32):\n"
                      "    \"test.b\"() : () -> ()\n"
                      "  }) : () -> ()\n"
                      "}\n";
  auto hazard = findTextualIRHazard(twice);
  ASSERT_TRUE(hazard);
  EXPECT_EQ(hazard->line, 5u);
  EXPECT_EQ(hazard->column, 3u);
  EXPECT_EQ(hazard->message, "redefinition of block '^bb0' (defined at line 3, column 3)");
  // One name in sibling regions, and a label after `{` on one line.
  EXPECT_FALSE(findTextualIRHazard("%a = \"test.op\"() ({\n^bb0(%x: f32):\n  \"test.y\"() : () -> ()\n"
                                   "}) : () -> ()\n%b = \"test.op\"() ({^bb0(%y: f32):\n"
                                   "  \"test.y\"() : () -> ()\n}) : () -> ()\n"));
  EXPECT_TRUE(findTextualIRHazard("\"test.op\"() ({^bb1:\n  cf.br ^bb2\n^bb1:\n  return\n}) : () -> ()\n"));
  // Successors name blocks again without defining them, also on a
  // continued line of a successor list.
  EXPECT_FALSE(findTextualIRHazard("func.func @g(%c: i1) {\n  cf.cond_br %c, ^bb1, ^bb1\n"
                                   "^bb1:\n  cf.switch %v : i32, [\n    default: ^bb1,\n"
                                   "    ^bb1\n  ]\n}\n"));
}

} // namespace
