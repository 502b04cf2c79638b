//===- SvgTest.cpp - the placement drawing --------------------------------===//

#include "wsc/Placement/Svg.h"

#include <gtest/gtest.h>

#include <regex>

using namespace wsc::place;

namespace {

Problem twoKernels() {
  Problem p;
  p.name = "a&b";
  p.wafer.width = 20;
  p.wafer.height = 10;
  p.kernels.push_back({"slow", KernelKind::Conv, {4, 4, 8, 8, 1, 1, 1, 1}});
  p.kernels.push_back({"fast", KernelKind::Conv, {4, 4, 8, 8, 1, 1, 1, 1}});
  p.edges = {{0, 1}};
  return p;
}

Placement twoPlaced() {
  Placement pl;
  pl.kernels.push_back({{1, 1, 1, 1}, 0, 0, Orientation::R0}); // 3 x 2 at the bottom left
  pl.kernels.push_back({{1, 1, 8, 1}, 5, 1, Orientation::R90}); // 9 x 3, 8 times faster
  return pl;
}

/// Balanced tags, quoted attributes, no stray '&' or '<': enough for our
/// generator's subset of XML.
bool wellFormed(const std::string &xml) {
  std::vector<std::string> open;
  std::regex tag(R"(<(/?)([A-Za-z?][A-Za-z0-9]*)((?:\s+[A-Za-z][A-Za-z0-9-]*="[^"<&]*")*)\s*(/?|\?)>)");
  size_t pos = 0;
  for (std::sregex_iterator it(xml.begin(), xml.end(), tag), end; it != end; ++it) {
    std::string between = xml.substr(pos, size_t(it->position()) - pos);
    if (between.find('<') != std::string::npos ||
        std::regex_search(between, std::regex("&(?!(amp|lt|gt|quot|apos);)")))
      return false;
    pos = size_t(it->position() + it->length());
    std::string name = (*it)[2];
    if (name[0] == '?')
      continue;
    if ((*it)[1] == "/") {
      if (open.empty() || open.back() != name)
        return false;
      open.pop_back();
    } else if ((*it)[4] != "/") {
      open.push_back(name);
    }
  }
  return open.empty() && xml.find('<', pos) == std::string::npos;
}

TEST(Svg, WellFormedAndComplete) {
  std::string svg = renderSvg(twoKernels(), twoPlaced());
  EXPECT_TRUE(wellFormed(svg)) << svg;
  EXPECT_NE(svg.find("<title>a&amp;b</title>"), std::string::npos);
  EXPECT_NE(svg.find("viewBox=\"0 0 20.00 10.00\""), std::string::npos);
  EXPECT_NE(svg.find(">slow</text>"), std::string::npos);
  EXPECT_NE(svg.find(">fast</text>"), std::string::npos);
  // The slowest is red; the line joins the centres (1.5, 1) and (9.5, 2.5),
  // with y flipped so that row 0 is at the bottom.
  EXPECT_NE(svg.find("fill=\"#e6283c\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<line x1=\"1.50\" y1=\"9.00\" x2=\"9.50\" y2=\"7.50\""), std::string::npos);
}

TEST(Svg, EscapesNamesAndIsDeterministic) {
  Problem p = twoKernels();
  p.kernels[0].name = "x<y>&\"'";
  std::string a = renderSvg(p, twoPlaced()), b = renderSvg(p, twoPlaced());
  EXPECT_EQ(a, b);
  EXPECT_TRUE(wellFormed(a));
  EXPECT_NE(a.find(">x&lt;y&gt;&amp;&quot;&apos;</text>"), std::string::npos);
}

TEST(Svg, SkipsKernelsWithIllegalArgs) {
  Placement pl = twoPlaced();
  pl.kernels[1].exec = {99, 1, 1, 1};
  std::string svg = renderSvg(twoKernels(), pl);
  EXPECT_TRUE(wellFormed(svg));
  EXPECT_EQ(svg.find(">fast</text>"), std::string::npos);
  EXPECT_EQ(svg.find("<line"), std::string::npos);
}

} // namespace
