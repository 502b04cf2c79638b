//===- Layout.cpp - named tensor dims mapped onto the wafer axes ----------===//

#include "wsc/Model/Layout.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

namespace wsc::model {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool contains(const std::vector<std::string> &list, const std::string &name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

std::string joined(const std::vector<std::string> &list) {
  std::string text = "[";
  for (size_t i = 0; i < list.size(); ++i)
    text += (i ? "," : "") + list[i];
  return text + "]";
}

bool isIdentifier(const std::string &name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

/// A dim or split factor the axes may name: its size and, once the axes
/// share their PEs, its extent on the busiest PE and in the padded tensor.
struct DimSize {
  std::string name;
  int64_t size = 1, extent = 1, padded = 1;
};

/// A layout names a few dims: a linear search, with no node per entry as a
/// map would allocate (tileOf runs for every tensor of every candidate).
using DimSizes = std::vector<DimSize>;

const DimSize *findDim(const DimSizes &sizes, const std::string &name) {
  for (const DimSize &d : sizes)
    if (d.name == name)
      return &d;
  return nullptr;
}
DimSize *findDim(DimSizes &sizes, const std::string &name) {
  return const_cast<DimSize *>(findDim(std::as_const(sizes), name));
}

/// The size of every dim and factor the axes may name.
DimSizes layoutDimSizes(const Layout &layout, const std::vector<int64_t> &shape) {
  DimSizes sizes;
  auto add = [&](std::string name, int64_t size) {
    if (DimSize *d = findDim(sizes, name))
      d->size = d->extent = d->padded = size;
    else
      sizes.push_back({std::move(name), size, size, size});
  };
  for (size_t i = 0; i < layout.dims.size() && i < shape.size(); ++i) {
    const std::string &dim = layout.dims[i];
    int64_t size = std::max<int64_t>(shape[i], 1);
    if (const DimSplit *split = layout.splitOf(dim)) {
      int64_t outer = std::max<int64_t>(split->outer, 1);
      add(outerFactor(dim), outer);
      add(innerFactor(dim), ceilDiv(size, outer));
    } else {
      add(dim, size);
    }
  }
  return sizes;
}

/// Greedy, major first: a dim takes min(size, PEs left); the dims after it
/// share the PEs left per block of it.
std::vector<AxisShare> shareAxis(const std::vector<std::string> &axis, int64_t pes,
                                 const DimSizes &sizes, Tiling tiling) {
  std::vector<AxisShare> shares;
  int64_t left = std::max<int64_t>(pes, 1);
  for (const std::string &name : axis) {
    AxisShare share;
    share.dim = name;
    const DimSize *d = findDim(sizes, name);
    share.size = d ? d->size : 1;
    share.pes = std::min(share.size, left);
    share.tile = ceilDiv(share.size, share.pes);
    share.used = tiling == Tiling::Uneven ? ceilDiv(share.size, share.tile) : share.pes;
    left /= share.pes;
    shares.push_back(share);
  }
  return shares;
}

int64_t usedPes(const std::vector<AxisShare> &shares, int64_t axisPes) {
  if (shares.empty())
    return std::max<int64_t>(axisPes, 1); // replicas along the whole axis
  int64_t used = 1;
  for (const AxisShare &s : shares)
    used *= s.used;
  return used;
}

} // namespace

const char *tilingName(Tiling tiling) {
  switch (tiling) {
  case Tiling::Exact:
    return "exact";
  case Tiling::Pad:
    return "pad";
  case Tiling::Uneven:
    return "uneven";
  }
  return "exact";
}

std::string outerFactor(const std::string &dim) { return dim + ".0"; }
std::string innerFactor(const std::string &dim) { return dim + ".1"; }

std::string baseDim(const std::string &name) {
  size_t n = name.size();
  if (n > 2 && name[n - 2] == '.' && (name[n - 1] == '0' || name[n - 1] == '1'))
    return name.substr(0, n - 2);
  return name;
}

const DimSplit *Layout::splitOf(const std::string &dim) const {
  for (const DimSplit &s : splits)
    if (s.dim == dim)
      return &s;
  return nullptr;
}

std::string Layout::str() const {
  std::string text = "dims=" + joined(dims);
  if (!splits.empty()) {
    std::vector<std::string> items;
    for (const DimSplit &s : splits)
      items.push_back(s.dim + ":" + std::to_string(s.outer));
    text += " split=" + joined(items);
  }
  text += " x=" + joined(x) + " y=" + joined(y);
  if (pesX > 0 || pesY > 0)
    text += " pes=" + std::to_string(pesX) + "x" + std::to_string(pesY);
  return text + " tiling=" + tilingName(tiling);
}

Layout Layout::renamed(const std::vector<std::string> &newDims) const {
  std::map<std::string, std::string> to;
  for (size_t i = 0; i < dims.size() && i < newDims.size(); ++i)
    to[dims[i]] = newDims[i];
  auto rename = [&](const std::string &name) {
    std::string base = baseDim(name);
    auto it = to.find(base);
    if (it == to.end())
      return name;
    return it->second + name.substr(base.size()); // keeps ".0" / ".1"
  };
  Layout result = *this;
  for (std::string &d : result.dims)
    d = rename(d);
  for (DimSplit &s : result.splits)
    s.dim = rename(s.dim);
  for (std::string &d : result.x)
    d = rename(d);
  for (std::string &d : result.y)
    d = rename(d);
  return result;
}

bool Layout::operator==(const Layout &o) const {
  if (splits.size() != o.splits.size())
    return false;
  for (size_t i = 0; i < splits.size(); ++i)
    if (splits[i].dim != o.splits[i].dim || splits[i].outer != o.splits[i].outer)
      return false;
  return dims == o.dims && x == o.x && y == o.y && pesX == o.pesX && pesY == o.pesY &&
         tiling == o.tiling;
}

//===----------------------------------------------------------------------===//
// Tile algebra
//===----------------------------------------------------------------------===//

TileInfo tileOf(const Layout &layout, const std::vector<int64_t> &shape,
                int64_t elementBytes) {
  DimSizes sizes = layoutDimSizes(layout, shape);
  TileInfo tile;
  tile.xShares = shareAxis(layout.x, layout.pesX, sizes, layout.tiling);
  tile.yShares = shareAxis(layout.y, layout.pesY, sizes, layout.tiling);
  tile.pesX = usedPes(tile.xShares, layout.pesX);
  tile.pesY = usedPes(tile.yShares, layout.pesY);

  // A dim no axis names keeps its whole size on every PE.
  for (const auto *shares : {&tile.xShares, &tile.yShares})
    for (const AxisShare &s : *shares)
      if (DimSize *d = findDim(sizes, s.dim)) {
        d->extent = s.tile;
        d->padded = s.pes * s.tile;
      }

  tile.elements = 1;
  int64_t total = 1, paddedTotal = 1;
  for (size_t i = 0; i < layout.dims.size() && i < shape.size(); ++i) {
    const std::string &dim = layout.dims[i];
    int64_t e, p;
    if (layout.splitOf(dim)) {
      const DimSize *outer = findDim(sizes, outerFactor(dim)), *inner = findDim(sizes, innerFactor(dim));
      e = outer->extent * inner->extent;
      p = outer->padded * inner->padded;
    } else {
      const DimSize *whole = findDim(sizes, dim);
      e = whole->extent;
      p = whole->padded;
    }
    tile.shape.push_back(e);
    tile.elements *= e;
    total *= std::max<int64_t>(shape[i], 1);
    paddedTotal *= p;
  }
  tile.bytes = tile.elements * elementBytes;
  if (layout.tiling == Tiling::Pad)
    tile.paddingElements = paddedTotal - total;
  return tile;
}

//===----------------------------------------------------------------------===//
// Verifier
//===----------------------------------------------------------------------===//

std::vector<std::string> verifyStructure(const Layout &layout) {
  std::vector<std::string> errors;
  std::vector<std::string> seen;
  for (const std::string &dim : layout.dims) {
    if (!isIdentifier(dim))
      errors.push_back("dim name '" + dim + "' is not an identifier");
    else if (contains(seen, dim))
      errors.push_back("dim '" + dim + "' appears twice in dims");
    seen.push_back(dim);
  }
  std::vector<std::string> splitDims;
  for (const DimSplit &s : layout.splits) {
    if (!contains(layout.dims, s.dim))
      errors.push_back("split names unknown dim '" + s.dim + "'");
    else if (contains(splitDims, s.dim))
      errors.push_back("dim '" + s.dim + "' is split twice");
    if (s.outer < 1)
      errors.push_back("split factor of dim '" + s.dim + "' must be positive (got " +
                       std::to_string(s.outer) + ")");
    splitDims.push_back(s.dim);
  }
  for (const char *axisName : {"x", "y"}) {
    const std::vector<std::string> &axis = axisName[0] == 'x' ? layout.x : layout.y;
    std::vector<std::string> onAxis;
    for (const std::string &name : axis) {
      std::string base = baseDim(name);
      bool factor = base != name;
      if (factor && !contains(layout.dims, base)) {
        errors.push_back(std::string(axisName) + " names unknown dim '" + name + "'");
      } else if (factor && !layout.splitOf(base)) {
        errors.push_back(std::string(axisName) + " names '" + name + "', but dim '" + base +
                         "' is not split");
      } else if (!factor && !contains(layout.dims, name)) {
        errors.push_back(std::string(axisName) + " names unknown dim '" + name + "'");
      } else if (!factor && layout.splitOf(name)) {
        errors.push_back("dim '" + name + "' is split; " + axisName + " must name its factors '" +
                         outerFactor(name) + "' and '" + innerFactor(name) + "'");
      } else if (contains(onAxis, name)) {
        errors.push_back("dim '" + name + "' appears twice on " + axisName);
      }
      onAxis.push_back(name);
    }
  }
  std::vector<std::string> both;
  for (const std::string &name : layout.x)
    if (contains(layout.y, name) && !contains(both, name)) {
      errors.push_back("dim '" + name + "' is mapped to both x and y");
      both.push_back(name);
    }
  return errors;
}

std::vector<std::string> verify(const Layout &layout, const std::vector<int64_t> &shape,
                                int64_t elementBytes, int64_t sramPerPe) {
  std::vector<std::string> errors = verifyStructure(layout);
  if (layout.dims.size() != shape.size())
    errors.push_back("layout names " + std::to_string(layout.dims.size()) +
                     " dims but the tensor has rank " + std::to_string(shape.size()));
  for (size_t i = 0; i < layout.dims.size() && i < shape.size(); ++i)
    if (shape[i] < 1)
      errors.push_back("dim '" + layout.dims[i] + "' has size " + std::to_string(shape[i]) +
                       "; layouts need positive static sizes");
  if (layout.pesX < 1 || layout.pesY < 1)
    errors.push_back("layout spans no PEs (pes=" + std::to_string(layout.pesX) + "x" +
                     std::to_string(layout.pesY) + "); set pes=WxH");
  if (!errors.empty())
    return errors; // the tile is meaningless until these are fixed

  for (size_t i = 0; i < layout.dims.size(); ++i)
    if (const DimSplit *s = layout.splitOf(layout.dims[i]); s && shape[i] % s->outer != 0)
      errors.push_back("split factor " + std::to_string(s->outer) + " does not divide dim '" +
                       s->dim + "' (size " + std::to_string(shape[i]) + ")");

  if (layout.tiling == Tiling::Exact) {
    DimSizes sizes = layoutDimSizes(layout, shape);
    const char *hint = "; use tiling=pad or tiling=uneven";
    for (const char *axisName : {"x", "y"}) {
      bool isX = axisName[0] == 'x';
      const std::vector<std::string> &axis = isX ? layout.x : layout.y;
      int64_t left = isX ? layout.pesX : layout.pesY;
      for (size_t k = 0; k < axis.size(); ++k) {
        // (verifyStructure refused names that are no dim or factor.)
        const DimSize *d = findDim(sizes, axis[k]);
        int64_t size = d ? d->size : 1;
        int64_t pes = std::min(size, left);
        std::string what = "dim '" + axis[k] + "' (size " + std::to_string(size) + ")";
        if (size % pes != 0)
          errors.push_back(what + " does not divide over " + std::to_string(pes) +
                           " PEs on " + axisName + hint);
        else if (size < left && (k + 1 == axis.size() || left % size != 0))
          errors.push_back(what + " does not evenly fill " + std::to_string(left) +
                           " PEs on " + axisName + hint);
        left /= pes;
      }
    }
  }

  if (sramPerPe > 0) {
    TileInfo tile = tileOf(layout, shape, elementBytes);
    if (tile.bytes > sramPerPe)
      errors.push_back("per-PE tile of " + std::to_string(tile.bytes) +
                       " bytes overflows the " + std::to_string(sramPerPe) +
                       "-byte PE SRAM");
  }
  return errors;
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

namespace {

class Parser {
public:
  explicit Parser(std::string_view text) : text(text) {}

  std::optional<Layout> parse(std::string &error) {
    Layout layout;
    std::vector<std::string> given;
    skipSpace();
    while (pos < text.size()) {
      std::string key = word();
      if (key.empty())
        return fail(error, "expected a field name at '" + rest() + "'");
      if (key != "dims" && key != "split" && key != "x" && key != "y" && key != "pes" &&
          key != "tiling")
        return fail(error, "unknown field '" + key +
                               "'; expected dims, split, x, y, pes or tiling");
      if (contains(given, key))
        return fail(error, "field '" + key + "' given twice");
      given.push_back(key);
      skipSpace();
      if (!consume('='))
        return fail(error, "expected '=' after '" + key + "'");
      skipSpace();
      bool ok = key == "pes"      ? parsePes(layout, error)
                : key == "tiling" ? parseTiling(layout, error)
                : key == "split"  ? parseSplits(layout, error)
                                  : parseNames(key, listFor(layout, key), error);
      if (!ok)
        return std::nullopt;
      skipSpace();
    }
    if (!contains(given, "dims"))
      return fail(error, "missing field 'dims'");
    return layout;
  }

private:
  std::string_view text;
  size_t pos = 0;

  static std::optional<Layout> fail(std::string &error, std::string message) {
    error = std::move(message);
    return std::nullopt;
  }
  static std::vector<std::string> &listFor(Layout &layout, const std::string &key) {
    return key == "dims" ? layout.dims : key == "x" ? layout.x : layout.y;
  }

  std::string rest() const { return std::string(text.substr(pos, 16)); }
  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  /// Letters, digits, '_' and '.' (factor names): the verifier judges them.
  std::string word() {
    size_t start = pos;
    while (pos < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[pos])) || text[pos] == '_' ||
            text[pos] == '.'))
      ++pos;
    return std::string(text.substr(start, pos - start));
  }
  std::optional<int64_t> number() {
    size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) &&
           pos - start < 15)
      ++pos;
    if (pos == start)
      return std::nullopt;
    return std::stoll(std::string(text.substr(start, pos - start)));
  }

  /// '[' item (',' item)* ']' with `item` parsing one entry.
  template <typename Item>
  bool parseList(const std::string &key, std::string &error, Item item) {
    if (!consume('[')) {
      error = "expected '[' after '" + key + "='";
      return false;
    }
    skipSpace();
    if (consume(']'))
      return true;
    while (true) {
      skipSpace();
      if (!item())
        return false;
      skipSpace();
      if (consume(']'))
        return true;
      if (!consume(',')) {
        error = "expected ',' or ']' in " + key + " at '" + rest() + "'";
        return false;
      }
    }
  }

  bool parseNames(const std::string &key, std::vector<std::string> &out,
                  std::string &error) {
    return parseList(key, error, [&] {
      std::string name = word();
      if (name.empty()) {
        error = "expected a dim name in " + key + " at '" + rest() + "'";
        return false;
      }
      out.push_back(name);
      return true;
    });
  }

  bool parseSplits(Layout &layout, std::string &error) {
    return parseList("split", error, [&] {
      std::string dim = word();
      skipSpace();
      if (dim.empty() || !consume(':')) {
        error = "expected 'dim:factor' in split at '" + rest() + "'";
        return false;
      }
      skipSpace();
      std::optional<int64_t> outer = number();
      if (!outer) {
        error = "expected a factor after '" + dim + ":' in split";
        return false;
      }
      layout.splits.push_back({dim, *outer});
      return true;
    });
  }

  bool parsePes(Layout &layout, std::string &error) {
    std::optional<int64_t> w = number();
    std::optional<int64_t> h;
    if (w && consume('x'))
      h = number();
    if (!w || !h) {
      error = "expected pes=WxH (e.g. pes=924x920) at '" + rest() + "'";
      return false;
    }
    layout.pesX = *w;
    layout.pesY = *h;
    return true;
  }

  bool parseTiling(Layout &layout, std::string &error) {
    std::string name = word();
    if (name == "exact")
      layout.tiling = Tiling::Exact;
    else if (name == "pad")
      layout.tiling = Tiling::Pad;
    else if (name == "uneven")
      layout.tiling = Tiling::Uneven;
    else {
      error = "unknown tiling '" + name + "'; expected exact, pad or uneven";
      return false;
    }
    return true;
  }
};

} // namespace

std::optional<Layout> parseLayout(std::string_view text, std::string *error) {
  std::string message;
  std::optional<Layout> layout = Parser(text).parse(message);
  if (!layout && error)
    *error = message;
  return layout;
}

} // namespace wsc::model
