//===- SvgTest.cpp - the placement drawing --------------------------------===//

#include "wsc/Placement/Svg.h"

#include <gtest/gtest.h>

#include <array>
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
  // 38 pixels per PE: the wafer at (20, 20) is 760 x 380, the key beside it.
  EXPECT_NE(svg.find("viewBox=\"0 0 1320.00 420.00\""), std::string::npos) << svg;
  // The slowest is red; the line joins the centres (1.5, 1) and (9.5, 2.5),
  // with y flipped so that row 0 is at the bottom.
  EXPECT_NE(svg.find("fill=\"#e6283c\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<line x1=\"77.00\" y1=\"362.00\" x2=\"381.00\" y2=\"305.00\""),
            std::string::npos);
  // Regions are numbered, and titled with their size and time.
  EXPECT_NE(svg.find("class=\"label\">1</text>"), std::string::npos);
  EXPECT_NE(svg.find("class=\"label\">2</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>1 slow: conv, 3x2 PEs, 1024 cycles per sample (100.0% of the "
                     "slowest), "),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("<title>2 fast: conv, 9x3 PEs, 128 cycles per sample (12.5% of the slowest)"),
            std::string::npos)
      << svg;
  // The key: utilisation (6 + 27 of 200 PEs), the slowest time, the colour
  // scale, and a line per region.
  EXPECT_NE(svg.find(">wafer 20x10 PEs; regions use 33 PEs (16.5%), grey is unused</text>"),
            std::string::npos);
  EXPECT_NE(svg.find(">slowest region: 1024 cycles per sample (it sets the throughput)</text>"),
            std::string::npos);
  EXPECT_NE(svg.find("<linearGradient id=\"time\""), std::string::npos);
  EXPECT_NE(svg.find("fill=\"url(#time)\""), std::string::npos);
  for (const char *cell : {">slow</text>", ">fast</text>", ">3 x 2</text>", ">9 x 3</text>",
                           ">1024</text>", ">128</text>", ">12.5%</text>"})
    EXPECT_NE(svg.find(cell), std::string::npos) << cell;
}

// A region too small for its number gets it beside it on a leader line;
// numbers never overlap.
TEST(Svg, SmallRegionsGetLeaderLines) {
  Problem p = twoKernels();
  p.wafer.width = p.wafer.height = 400; // 1.9 pixels per PE
  Placement pl = twoPlaced();
  pl.kernels[1].x = 4; // right next to the first
  std::string svg = renderSvg(p, pl);
  EXPECT_TRUE(wellFormed(svg));
  size_t leaders = 0;
  for (size_t at = svg.find("class=\"leader\"/>"); at != std::string::npos;
       at = svg.find("class=\"leader\"/>", at + 1))
    ++leaders;
  EXPECT_EQ(leaders, 4u); // a line and a box each
  std::regex box(R"re(<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" fill="#ffffff" stroke="#000000" stroke-width="0.5" class="leader"/>)re");
  std::vector<std::array<double, 4>> boxes;
  for (std::sregex_iterator it(svg.begin(), svg.end(), box), end; it != end; ++it)
    boxes.push_back({std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]),
                     std::stod((*it)[4])});
  ASSERT_EQ(boxes.size(), 2u);
  auto &a = boxes[0], &b = boxes[1];
  bool apart = a[0] + a[2] <= b[0] || b[0] + b[2] <= a[0] || a[1] + a[3] <= b[1] ||
               b[1] + b[3] <= a[1];
  EXPECT_TRUE(apart) << svg;
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
  EXPECT_EQ(svg.find("<line "), std::string::npos);
}

} // namespace
