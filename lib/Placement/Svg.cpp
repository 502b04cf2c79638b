//===- Svg.cpp - draw a placement -----------------------------------------===//

#include "wsc/Placement/Svg.h"

#include "wsc/Placement/Checker.h"

#include <algorithm>
#include <cstdio>

namespace wsc::place {

namespace {

std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    default: out += c;
    }
  }
  return out;
}

/// Fixed-point numbers: the same bytes on every run and locale.
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

/// Green at 0, yellow at 0.5, red at 1.
std::string colour(double ratio) {
  ratio = std::clamp(ratio, 0.0, 1.0);
  int r = ratio < 0.5 ? int(40 + 2 * ratio * 190) : 230;
  int g = ratio < 0.5 ? 200 : int(200 - 2 * (ratio - 0.5) * 160);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, 60);
  return buf;
}

} // namespace

std::string renderSvg(const Problem &problem, const Placement &placement,
                      const std::vector<SvgRoute> &routes) {
  const Wafer &wafer = problem.wafer;
  size_t n = std::min(problem.kernels.size(), placement.kernels.size());
  std::vector<bool> drawn(n, false);
  std::vector<Rect> rects(n);
  std::vector<KernelCost> costs(n);
  int64_t slowest = 1;
  for (size_t i = 0; i < n; ++i) {
    const Kernel &kernel = problem.kernels[i];
    if (!checkFormal(kernel).empty() || !checkExec(kernel, placement.kernels[i].exec).empty())
      continue;
    drawn[i] = true;
    costs[i] = evaluate(kernel, placement.kernels[i].exec, wafer.target);
    rects[i] = footprint(costs[i], placement.kernels[i]);
    slowest = std::max(slowest, costs[i].time);
  }
  double W = double(wafer.width), H = double(wafer.height);
  double scale = 800.0 / std::max(W, H), stroke = std::max(W, H) / 800.0;
  auto flipY = [&](double y) { return H - y; };

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W * scale) + "\" height=\"" +
         num(H * scale) + "\" viewBox=\"0 0 " + num(W) + " " + num(H) + "\">\n";
  out += "<title>" + escape(problem.name.empty() ? "placement" : problem.name) + "</title>\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + num(W) + "\" height=\"" + num(H) +
         "\" fill=\"#f2f2f2\" stroke=\"#000000\" stroke-width=\"" + num(2 * stroke) + "\"/>\n";
  for (size_t i = 0; i < n; ++i) {
    if (!drawn[i])
      continue;
    const Rect &r = rects[i];
    double ratio = double(costs[i].time) / double(slowest);
    out += "<rect x=\"" + num(double(r.x)) + "\" y=\"" + num(flipY(double(r.y + r.h))) +
           "\" width=\"" + num(double(r.w)) + "\" height=\"" + num(double(r.h)) + "\" fill=\"" +
           colour(ratio) + "\" stroke=\"#333333\" stroke-width=\"" + num(stroke) + "\" class=\"region\"><title>" +
           escape(problem.kernels[i].name) + ": " + kindInfo(problem.kernels[i].kind).name +
           ", time " + std::to_string(costs[i].time) + " (" + num(100 * ratio) +
           "% of the slowest), " + std::to_string(costs[i].memory) +
           " words/PE</title></rect>\n";
  }
  auto centre = [&](size_t i) {
    const Rect &r = rects[i];
    return std::make_pair(double(r.x) + double(r.w) / 2, flipY(double(r.y) + double(r.h) / 2));
  };
  for (const SvgRoute &route : routes) {
    std::string points;
    for (auto [x, y] : route.points)
      points += (points.empty() ? "" : " ") + num(double(x) + 0.5) + "," +
                num(flipY(double(y) + 0.5));
    out += "<polyline points=\"" + points + "\" fill=\"none\" stroke=\"#1f3f99\" stroke-width=\"" +
           num(1.5 * stroke) + "\" stroke-opacity=\"0.7\" class=\"route\"><title>" +
           escape(route.from) + " -&gt; " + escape(route.to) + "</title></polyline>\n";
  }
  for (auto [a, b] : routes.empty() ? problem.edges : decltype(problem.edges){}) {
    if (size_t(a) >= n || size_t(b) >= n || !drawn[size_t(a)] || !drawn[size_t(b)])
      continue;
    auto [x1, y1] = centre(size_t(a));
    auto [x2, y2] = centre(size_t(b));
    out += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
           num(y2) + "\" stroke=\"#1f3f99\" stroke-width=\"" + num(1.5 * stroke) +
           "\" stroke-opacity=\"0.7\"/>\n";
  }
  for (size_t i = 0; i < n; ++i) {
    if (!drawn[i])
      continue;
    const Rect &r = rects[i];
    const std::string &name = problem.kernels[i].name;
    double size = std::min(double(r.h) * 0.4, double(r.w) / (0.62 * double(name.size()) + 0.5));
    auto [x, y] = centre(i);
    out += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-family=\"sans-serif\" font-size=\"" +
           num(std::max(size, 0.5)) +
           "\" text-anchor=\"middle\" dominant-baseline=\"central\" class=\"label\">" + escape(name) +
           "</text>\n";
  }
  out += "</svg>\n";
  return out;
}

} // namespace wsc::place
