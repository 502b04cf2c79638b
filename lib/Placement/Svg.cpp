//===- Svg.cpp - draw a placement -----------------------------------------===//
//
// The wafer on the left, drawn in pixels (row 0 at the bottom), each region
// numbered; a key on the right: what the colours mean, how much of the wafer
// the regions use, and one line per region with its size and time. Numbers
// that do not fit their region go beside it on a leader line.
//
//===----------------------------------------------------------------------===//

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

std::string percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * ratio);
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

std::string text(double x, double y, const std::string &body, double size,
                 const std::string &extra = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-family=\"sans-serif\" font-size=\"" +
         num(size) + "\"" + (extra.empty() ? "" : " " + extra) + ">" + body + "</text>\n";
}

constexpr double kMargin = 20;    ///< around the wafer, pixels
constexpr double kSide = 760;     ///< the wafer's longer side, pixels
constexpr double kKeyWidth = 520; ///< the key on the right
constexpr double kFont = 12;      ///< labels and key lines
constexpr double kRow = 17;       ///< key line pitch

struct Box {
  double x0, y0, x1, y1;
  bool meets(const Box &o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

} // namespace

std::string renderSvg(const Problem &problem, const Placement &placement,
                      const std::vector<SvgRoute> &routes) {
  const Wafer &wafer = problem.wafer;
  size_t n = std::min(problem.kernels.size(), placement.kernels.size());
  std::vector<size_t> drawn;
  std::vector<Rect> rects(n);
  std::vector<KernelCost> costs(n);
  int64_t slowest = 1, used = 0;
  for (size_t i = 0; i < n; ++i) {
    const Kernel &kernel = problem.kernels[i];
    if (!checkFormal(kernel).empty() || !checkExec(kernel, placement.kernels[i].exec).empty())
      continue;
    drawn.push_back(i);
    costs[i] = evaluate(kernel, placement.kernels[i].exec, wafer.target);
    rects[i] = footprint(costs[i], placement.kernels[i]);
    slowest = std::max(slowest, costs[i].time);
    used += rects[i].w * rects[i].h;
  }
  double W = double(wafer.width), H = double(wafer.height);
  double s = kSide / std::max(W, H);
  auto px = [&](double x) { return kMargin + x * s; };
  auto py = [&](double y) { return kMargin + (H - y) * s; }; // row 0 at the bottom
  double keyX = px(W) + kMargin;
  double keyHeight = 150 + kRow * double(drawn.size() + 1);
  double width = keyX + kKeyWidth, height = std::max(py(0) + kMargin, keyHeight);

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" +
         num(height) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) + "\">\n";
  std::string name = escape(problem.name.empty() ? "placement" : problem.name);
  out += "<title>" + name + "</title>\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + num(width) + "\" height=\"" + num(height) +
         "\" fill=\"#ffffff\"/>\n";
  out += "<defs><linearGradient id=\"time\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">"
         "<stop offset=\"0\" stop-color=\"" + colour(0) + "\"/><stop offset=\"0.5\" stop-color=\"" +
         colour(0.5) + "\"/><stop offset=\"1\" stop-color=\"" + colour(1) +
         "\"/></linearGradient></defs>\n";
  // The wafer: grey where no region is.
  out += "<rect x=\"" + num(px(0)) + "\" y=\"" + num(py(H)) + "\" width=\"" + num(W * s) +
         "\" height=\"" + num(H * s) + "\" fill=\"#e4e4e4\" stroke=\"#000000\" stroke-width=\"1.5\" "
         "class=\"wafer\"/>\n";
  for (size_t k = 0; k < drawn.size(); ++k) {
    size_t i = drawn[k];
    const Rect &r = rects[i];
    double ratio = double(costs[i].time) / double(slowest);
    out += "<rect x=\"" + num(px(double(r.x))) + "\" y=\"" + num(py(double(r.y + r.h))) +
           "\" width=\"" + num(double(r.w) * s) + "\" height=\"" + num(double(r.h) * s) +
           "\" fill=\"" + colour(ratio) +
           "\" stroke=\"#333333\" stroke-width=\"0.75\" class=\"region\"><title>" +
           std::to_string(k + 1) + " " + escape(problem.kernels[i].name) + ": " +
           kindInfo(problem.kernels[i].kind).name + ", " + std::to_string(r.w) + "x" +
           std::to_string(r.h) + " PEs, " + std::to_string(costs[i].time) +
           " cycles per sample (" + percent(ratio) + " of the slowest), " +
           std::to_string(costs[i].memory) + " words/PE</title></rect>\n";
  }
  auto centre = [&](size_t i) {
    const Rect &r = rects[i];
    return std::make_pair(px(double(r.x) + double(r.w) / 2), py(double(r.y) + double(r.h) / 2));
  };
  for (const SvgRoute &route : routes) {
    std::string points;
    for (auto [x, y] : route.points)
      points += (points.empty() ? "" : " ") + num(px(double(x) + 0.5)) + "," +
                num(py(double(y) + 0.5));
    out += "<polyline points=\"" + points +
           "\" fill=\"none\" stroke=\"#1f3f99\" stroke-width=\"1.5\" stroke-opacity=\"0.7\" "
           "class=\"route\"><title>" +
           escape(route.from) + " -&gt; " + escape(route.to) + "</title></polyline>\n";
  }
  std::vector<bool> isDrawn(n, false);
  for (size_t i : drawn)
    isDrawn[i] = true;
  for (auto [a, b] : routes.empty() ? problem.edges : decltype(problem.edges){}) {
    if (size_t(a) >= n || size_t(b) >= n || !isDrawn[size_t(a)] || !isDrawn[size_t(b)])
      continue;
    auto [x1, y1] = centre(size_t(a));
    auto [x2, y2] = centre(size_t(b));
    out += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
           num(y2) + "\" stroke=\"#1f3f99\" stroke-width=\"1.5\" stroke-opacity=\"0.7\" "
           "class=\"route\"/>\n";
  }

  // Region numbers: inside when the number fits (turned upright in a tall
  // narrow region), else beside the region on a leader line, at the nearest
  // height clear of the labels already placed.
  std::vector<Box> taken;
  std::vector<size_t> outside;
  const std::string centred =
      "font-weight=\"bold\" text-anchor=\"middle\" dominant-baseline=\"central\" class=\"label\"";
  auto labelSize = [](size_t k) {
    return std::make_pair(0.62 * kFont * double(std::to_string(k + 1).size()) + 4, kFont + 2);
  };
  for (size_t k = 0; k < drawn.size(); ++k) {
    size_t i = drawn[k];
    const Rect &r = rects[i];
    double rw = double(r.w) * s, rh = double(r.h) * s;
    auto [w, h] = labelSize(k);
    auto [cx, cy] = centre(i);
    std::string label = std::to_string(k + 1);
    if (rw >= w + 2 && rh >= h + 2) {
      out += text(cx, cy, label, kFont, centred);
      taken.push_back({cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2});
    } else if (rh >= w + 2 && rw >= h) {
      out += text(cx, cy, label, kFont,
                  centred + " transform=\"rotate(-90 " + num(cx) + " " + num(cy) + ")\"");
      taken.push_back({cx - h / 2, cy - w / 2, cx + h / 2, cy + w / 2});
    } else {
      outside.push_back(k);
    }
  }
  for (size_t k : outside) {
    size_t i = drawn[k];
    std::string label = std::to_string(k + 1);
    auto [w, h] = labelSize(k);
    const Rect &r = rects[i];
    Box region{px(double(r.x)), py(double(r.y + r.h)), px(double(r.x + r.w)), py(double(r.y))};
    auto [cx, cy] = centre(i);
    bool right = region.x1 + 8 + w <= px(W);
    double lx = right ? region.x1 + 8 : region.x0 - 8 - w;
    Box spot{lx, cy - h / 2, lx + w, cy + h / 2};
    for (int step = 0; step < 400; ++step) {
      // 0, +1, -1, +2, -2, ... label heights from the region's centre.
      double shift = double((step + 1) / 2) * (step % 2 ? 1 : -1) * h;
      Box tried{spot.x0, cy - h / 2 + shift, spot.x1, cy + h / 2 + shift};
      bool clash = tried.y0 < 0 || tried.y1 > height;
      for (const Box &t : taken)
        clash = clash || tried.meets(t);
      if (!clash) {
        spot = tried;
        break;
      }
    }
    taken.push_back(spot);
    double ax = right ? spot.x0 : spot.x1, ay = (spot.y0 + spot.y1) / 2;
    out += "<line x1=\"" + num(cx) + "\" y1=\"" + num(cy) + "\" x2=\"" + num(ax) + "\" y2=\"" +
           num(ay) + "\" stroke=\"#000000\" stroke-width=\"0.75\" class=\"leader\"/>\n";
    out += "<rect x=\"" + num(spot.x0) + "\" y=\"" + num(spot.y0) + "\" width=\"" + num(w) +
           "\" height=\"" + num(h) + "\" fill=\"#ffffff\" stroke=\"#000000\" stroke-width=\"0.5\" "
           "class=\"leader\"/>\n";
    out += text((spot.x0 + spot.x1) / 2, ay, label, kFont, centred);
  }

  // The key.
  double y = kMargin + 14;
  out += text(keyX, y, name, 16, "font-weight=\"bold\" class=\"legend\"");
  y += 22;
  out += text(keyX, y,
              "wafer " + std::to_string(wafer.width) + "x" + std::to_string(wafer.height) +
                  " PEs; regions use " + std::to_string(used) + " PEs (" +
                  percent(double(used) / (W * H)) + "), grey is unused",
              kFont, "class=\"legend\"");
  y += kRow;
  out += text(keyX, y,
              "slowest region: " + std::to_string(slowest) +
                  " cycles per sample (it sets the throughput)",
              kFont, "class=\"legend\"");
  y += kRow + 4;
  out += text(keyX, y, "colour: a region's time per sample against the slowest's", kFont,
              "class=\"legend\"");
  y += 6;
  out += "<rect x=\"" + num(keyX) + "\" y=\"" + num(y) +
         "\" width=\"240\" height=\"12\" fill=\"url(#time)\" stroke=\"#333333\" "
         "stroke-width=\"0.5\" class=\"legend\"/>\n";
  y += 24;
  out += text(keyX, y, "0%", kFont, "class=\"legend\"");
  out += text(keyX + 120, y, "50%", kFont, "text-anchor=\"middle\" class=\"legend\"");
  out += text(keyX + 240, y, "100%", kFont, "text-anchor=\"end\" class=\"legend\"");
  y += kRow;
  out += text(keyX, y, "area: the PEs a region holds; blue: routes between regions", kFont,
              "class=\"legend\"");
  y += kRow + 8;
  const double cols[] = {0, 30, 160, 235, 330, 440};
  const char *heads[] = {"#", "region", "kind", "w x h PEs", "cycles/sample", "of slowest"};
  for (size_t c = 0; c < 6; ++c)
    out += text(keyX + cols[c], y, heads[c], kFont, "font-weight=\"bold\" class=\"legend\"");
  for (size_t k = 0; k < drawn.size(); ++k) {
    size_t i = drawn[k];
    y += kRow;
    double ratio = double(costs[i].time) / double(slowest);
    std::string regionName = problem.kernels[i].name;
    if (regionName.size() > 16)
      regionName = regionName.substr(0, 15) + "~";
    out += "<rect x=\"" + num(keyX + 14) + "\" y=\"" + num(y - 10) +
           "\" width=\"11\" height=\"11\" fill=\"" + colour(ratio) +
           "\" stroke=\"#333333\" stroke-width=\"0.5\" class=\"key\"/>\n";
    const std::string cells[] = {std::to_string(k + 1),
                                 escape(regionName),
                                 kindInfo(problem.kernels[i].kind).name,
                                 std::to_string(rects[i].w) + " x " + std::to_string(rects[i].h),
                                 std::to_string(costs[i].time),
                                 percent(ratio)};
    for (size_t c = 0; c < 6; ++c)
      out += text(keyX + cols[c], y, cells[c], kFont, "class=\"key\"");
  }
  out += "</svg>\n";
  return out;
}

} // namespace wsc::place
