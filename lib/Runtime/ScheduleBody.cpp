//===- ScheduleBody.cpp - Schedule parser: kernel bodies and linalg regions ---===//

#include "ScheduleParser.h"

#include "LoopBounds.h"
#include "SampleDependence.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace wsc::rt::schedule_parser {

const std::map<std::string, OpInfo> &scalarOps() {
  static const std::map<std::string, OpInfo> ops = {
      {"arith.constant", {ScalarOp::Constant, 0, '*', '*'}},
      {"arith.addf", {ScalarOp::AddF, 2, 'F', 'F'}},
      {"arith.subf", {ScalarOp::SubF, 2, 'F', 'F'}},
      {"arith.mulf", {ScalarOp::MulF, 2, 'F', 'F'}},
      {"arith.divf", {ScalarOp::DivF, 2, 'F', 'F'}},
      {"arith.negf", {ScalarOp::NegF, 1, 'F', 'F'}},
      {"arith.maximumf", {ScalarOp::MaximumF, 2, 'F', 'F'}},
      {"arith.minimumf", {ScalarOp::MinimumF, 2, 'F', 'F'}},
      {"arith.maxnumf", {ScalarOp::MaxNumF, 2, 'F', 'F'}},
      {"arith.minnumf", {ScalarOp::MinNumF, 2, 'F', 'F'}},
      {"arith.cmpf", {ScalarOp::CmpF, 2, 'F', 'B'}},
      {"arith.cmpi", {ScalarOp::CmpI, 2, 'I', 'B'}},
      {"arith.select", {ScalarOp::Select, 3, '*', '='}},
      {"arith.addi", {ScalarOp::AddI, 2, 'I', 'I'}},
      {"arith.subi", {ScalarOp::SubI, 2, 'I', 'I'}},
      {"arith.muli", {ScalarOp::MulI, 2, 'I', 'I'}},
      {"arith.andi", {ScalarOp::AndI, 2, 'I', 'I'}},
      {"arith.ori", {ScalarOp::OrI, 2, 'I', 'I'}},
      {"arith.xori", {ScalarOp::XOrI, 2, 'I', 'I'}},
      {"arith.maxsi", {ScalarOp::MaxSI, 2, 'I', 'I'}},
      {"arith.minsi", {ScalarOp::MinSI, 2, 'I', 'I'}},
      {"arith.extf", {ScalarOp::ExtF, 1, 'F', 'F'}},
      {"arith.truncf", {ScalarOp::TruncF, 1, 'F', 'F'}},
      {"arith.sitofp", {ScalarOp::SIToFP, 1, 'I', 'F'}},
      {"arith.uitofp", {ScalarOp::UIToFP, 1, 'I', 'F'}},
      {"arith.fptosi", {ScalarOp::FPToSI, 1, 'F', 'I'}},
      {"arith.index_cast", {ScalarOp::IndexCast, 1, 'I', 'I'}},
      {"arith.extui", {ScalarOp::ExtUI, 1, 'I', 'I'}},
      {"arith.extsi", {ScalarOp::ExtSI, 1, 'I', 'I'}},
      {"arith.trunci", {ScalarOp::TruncI, 1, 'I', 'I'}},
      {"math.exp", {ScalarOp::Exp, 1, 'F', 'F'}},
      {"math.log", {ScalarOp::Log, 1, 'F', 'F'}},
      {"math.tanh", {ScalarOp::Tanh, 1, 'F', 'F'}},
      {"math.sqrt", {ScalarOp::Sqrt, 1, 'F', 'F'}},
      {"math.rsqrt", {ScalarOp::Rsqrt, 1, 'F', 'F'}},
      {"math.erf", {ScalarOp::Erf, 1, 'F', 'F'}},
      {"math.absf", {ScalarOp::AbsF, 1, 'F', 'F'}},
      {"math.powf", {ScalarOp::PowF, 2, 'F', 'F'}},
      {"math.log1p", {ScalarOp::Log1p, 1, 'F', 'F'}},
      {"math.expm1", {ScalarOp::Expm1, 1, 'F', 'F'}},
      {"linalg.index", {ScalarOp::Index, 0, '*', 'I'}},
      {"tensor.extract", {ScalarOp::Extract, -1, '*', '*'}},
      {"arith.divsi", {ScalarOp::DivSI, 2, 'I', 'I'}},
      {"arith.divui", {ScalarOp::DivUI, 2, 'I', 'I'}},
      {"arith.remsi", {ScalarOp::RemSI, 2, 'I', 'I'}},
      {"arith.remui", {ScalarOp::RemUI, 2, 'I', 'I'}},
      {"arith.floordivsi", {ScalarOp::FloorDivSI, 2, 'I', 'I'}},
      {"arith.ceildivsi", {ScalarOp::CeilDivSI, 2, 'I', 'I'}},
      {"arith.ceildivui", {ScalarOp::CeilDivUI, 2, 'I', 'I'}},
      {"arith.index_castui", {ScalarOp::IndexCastUI, 1, 'I', 'I'}},
      {"cf.assert", {ScalarOp::Assert, 1, 'I', '-'}},
  };
  return ops;
}

bool isDivision(ScalarOp op) {
  switch (op) {
  case ScalarOp::DivSI:
  case ScalarOp::DivUI:
  case ScalarOp::RemSI:
  case ScalarOp::RemUI:
  case ScalarOp::FloorDivSI:
  case ScalarOp::CeilDivSI:
  case ScalarOp::CeilDivUI:
    return true;
  default:
    return false;
  }
}

const std::map<std::string, CmpPredicate> &cmpfPredicates() {
  static const std::map<std::string, CmpPredicate> p = {
      {"false", CmpPredicate::False}, {"oeq", CmpPredicate::OEQ}, {"ogt", CmpPredicate::OGT},
      {"oge", CmpPredicate::OGE},     {"olt", CmpPredicate::OLT}, {"ole", CmpPredicate::OLE},
      {"one", CmpPredicate::ONE},     {"ord", CmpPredicate::ORD}, {"ueq", CmpPredicate::UEQ},
      {"ugt", CmpPredicate::UGT},     {"uge", CmpPredicate::UGE}, {"ult", CmpPredicate::ULT},
      {"ule", CmpPredicate::ULE},     {"une", CmpPredicate::UNE}, {"uno", CmpPredicate::UNO},
      {"true", CmpPredicate::True}};
  return p;
}

const std::map<std::string, CmpPredicate> &cmpiPredicates() {
  static const std::map<std::string, CmpPredicate> p = {
      {"eq", CmpPredicate::EQ},    {"ne", CmpPredicate::NE},    {"slt", CmpPredicate::SLT},
      {"sle", CmpPredicate::SLE},  {"sgt", CmpPredicate::SGT},  {"sge", CmpPredicate::SGE},
      {"ult", CmpPredicate::ULTi}, {"ule", CmpPredicate::ULEi}, {"ugt", CmpPredicate::UGTi},
      {"uge", CmpPredicate::UGEi}};
  return p;
}

void Parser::expectCounts(const JsonReader &j, const BodyOp &op, size_t operands, size_t results) {
  if (op.operands.size() != operands)
    j.error(op.name, " takes ", operands, " operand(s), got ", op.operands.size());
  if (op.results.size() != results)
    j.error(op.name, " has ", results, " result(s), got ", op.results.size());
}

BodyOp Parser::parseBodyOp(const JsonReader &j, int scope) {
  j.requireObject();
  BodyOp op;
  op.path = j.path();
  JsonReader opj = j.at("op");
  std::string name = opj.asString();
  op.name = name;
  JsonReader operands = j.at("operands"), results = j.at("results");
  op.operands = valueIds(operands);
  op.results = valueIds(results);
  for (size_t i = 0; i < op.operands.size(); ++i)
    use(op.operands[i], scope, kUndefined, operands[i]);
  if (name == "tensor.empty") {
    op.kind = BodyOpKind::Empty;
    expectCounts(j, op, 0, 1);
  } else if (name == "arith.constant") {
    op.kind = BodyOpKind::Constant;
    expectCounts(j, op, 0, 1);
    parseConstantValue(j.at("value"), op);
  } else if (name == "tensor.collapse_shape" || name == "tensor.expand_shape") {
    op.kind = name == "tensor.collapse_shape" ? BodyOpKind::CollapseShape : BodyOpKind::ExpandShape;
    expectCounts(j, op, 1, 1);
    parseReassociation(j.at("reassociation"), op);
  } else if (name == "tensor.extract_slice" || name == "tensor.insert_slice") {
    const bool extract = name == "tensor.extract_slice";
    op.kind = extract ? BodyOpKind::ExtractSlice : BodyOpKind::InsertSlice;
    expectCounts(j, op, extract ? 1 : 2, 1);
    parseSlice(j, op);
  } else if (name == "linalg") {
    op.kind = BodyOpKind::Linalg;
    op.name = j.at("name").asString();
    parseLinalg(j, op, scope);
  } else {
    opj.error("unknown kernel body op '", name,
              "' (expected tensor.empty, arith.constant, tensor.collapse_shape, "
              "tensor.expand_shape, tensor.extract_slice, tensor.insert_slice or linalg)");
  }
  for (size_t i = 0; i < op.results.size(); ++i)
    define(op.results[i], scope, results[i]);
  return op;
}

void Parser::parseConstantValue(const JsonReader &v, BodyOp &op) {
  const ValueSpec &r = s_.values[op.results[0]];
  const bool isInt = storageOf(r.dtype) != Storage::F32;
  auto element = [&](const JsonReader &e) {
    if (isInt) {
      if (e.raw().is_boolean())
        op.intValues.push_back(e.raw().get<bool>() ? 1 : 0);
      else
        op.intValues.push_back(e.asInt());
    } else {
      op.floatValues.push_back(e.asReal());
    }
  };
  if (v.isArray()) {
    op.splat = false;
    const int64_t n = numElements(r.shape);
    if (static_cast<int64_t>(v.size()) != n)
      v.error(v.size(), " constant elements for a value of shape ", shapeToString(r.shape), " (", n,
              " elements)");
    for (size_t i = 0; i < v.size(); ++i)
      element(v[i]);
  } else {
    op.splat = true;
    element(v);
  }
}

void Parser::parseSlice(const JsonReader &j, BodyOp &op) {
  const bool extract = op.kind == BodyOpKind::ExtractSlice;
  const ValueSpec &full = s_.values[extract ? op.operands[0] : op.operands[1]];
  const ValueSpec &piece = s_.values[extract ? op.results[0] : op.operands[0]];
  const ValueSpec &res = s_.values[op.results[0]];
  const size_t rank = full.shape.size();
  auto list = [&](const char *key, std::vector<int64_t> &out, int64_t lo) {
    JsonReader l = j.at(key);
    l.requireArray();
    if (l.size() != rank)
      l.error(key, " has ", l.size(), " entries for a rank-", rank, " tensor");
    for (size_t i = 0; i < l.size(); ++i)
      out.push_back(l[i].asIntIn(lo, std::numeric_limits<int32_t>::max()));
  };
  list("offsets", op.offsets, 0);
  list("sizes", op.sizes, 0);
  list("strides", op.strides, 1);
  for (size_t d = 0; d < rank; ++d)
    if (op.sizes[d] && op.offsets[d] + (op.sizes[d] - 1) * op.strides[d] >= full.shape[d])
      j.at("sizes")[d].error("slice dim ", d, " (offset ", op.offsets[d], ", size ", op.sizes[d],
                             ", stride ", op.strides[d], ") runs past the tensor's ",
                             full.shape[d]);
  if (piece.dtype != full.dtype || res.dtype != full.dtype)
    j.error(op.name, " mixes element types");
  if (!extract && (res.shape != full.shape || res.batchDim != full.batchDim))
    j.error("insert_slice result must have the destination's shape and batch dim");
  // piece.shape must be `sizes` with some unit dims dropped.
  std::vector<int> kept; // piece dim -> slice dim
  for (size_t d = 0, p = 0; d < rank; ++d) {
    if (p < piece.shape.size() && piece.shape[p] == op.sizes[d]) {
      kept.push_back(static_cast<int>(d));
      ++p;
    } else if (op.sizes[d] != 1) {
      j.error("slice sizes ", shapeToString(op.sizes), " do not match ",
              shapeToString(piece.shape));
    }
  }
  if (kept.size() != piece.shape.size())
    j.error("slice sizes ", shapeToString(op.sizes), " do not match ", shapeToString(piece.shape));
  op.sliceDims = kept;
  if (!extract && res.ragged != full.ragged)
    j.error("insert_slice result is ", raggedText(res), " but its destination is ",
            raggedText(full));
  // Along a ragged dim only the valid prefix exists: slices start at 0.
  for (size_t d = 0; d < rank; ++d) {
    auto at = std::find(kept.begin(), kept.end(), static_cast<int>(d));
    const int p = at == kept.end() ? -1 : static_cast<int>(at - kept.begin());
    const bool pieceRagged = p >= 0 && piece.isRaggedDim(p);
    const bool fullRagged = full.isRaggedDim(static_cast<int>(d));
    if (!pieceRagged && !fullRagged)
      continue;
    if (op.offsets[d] != 0 || op.strides[d] != 1)
      j.at("offsets")[d].error("slice dim ", d, " is ragged but starts at ", op.offsets[d],
                               " with stride ", op.strides[d],
                               " (only a prefix of a ragged dim is valid: offset 0, stride 1)");
    if (pieceRagged && fullRagged && perSample(piece, p) != perSample(full, static_cast<int>(d)))
      j.at("sizes")[d].error("slice dim ", d, " takes part of a ragged dim as a ragged dim");
  }
  if (full.batchDim) {
    const int b = *full.batchDim;
    if (op.offsets[b] != 0 || op.strides[b] != 1 || op.sizes[b] != full.shape[b])
      j.error("a slice must take the batch dim ", b, " whole");
    if (!piece.batchDim || kept[*piece.batchDim] != b)
      j.error("the slice's batch dim does not line up with dim ", b);
  } else if (piece.batchDim) {
    j.error("the slice has a batch dim but the full tensor has none");
  }
}

void Parser::parseReassociation(const JsonReader &j, BodyOp &op) {
  j.requireArray();
  int next = 0;
  for (size_t g = 0; g < j.size(); ++g) {
    JsonReader group = j[g];
    group.requireArray();
    std::vector<int> dims;
    for (size_t i = 0; i < group.size(); ++i) {
      int64_t d = group[i].asInt();
      if (d != next)
        group[i].error("reassociation must list dims 0, 1, ... in order; expected ", next, ", got ",
                       d);
      dims.push_back(next++);
    }
    if (dims.empty())
      group.error("empty reassociation group");
    op.reassociation.push_back(dims);
  }
  const ValueSpec &in = s_.values[op.operands[0]], &out = s_.values[op.results[0]];
  if (in.dtype != out.dtype)
    j.error("reshape changes dtype from ", dtypeName(in.dtype), " to ", dtypeName(out.dtype));
  const bool collapse = op.kind == BodyOpKind::CollapseShape;
  const Shape &big = collapse ? in.shape : out.shape;
  const Shape &small = collapse ? out.shape : in.shape;
  // A rank-0 side has no groups (tensor<1x1xf32> <-> tensor<f32>).
  if (small.empty() && op.reassociation.empty()) {
    if (numElements(big) != 1)
      j.error("reshape between ", shapeToString(in.shape), " and ", shapeToString(out.shape),
              " changes the element count");
    if (in.ragged || out.ragged)
      j.error("a reshape to or from rank 0 cannot be ragged");
    return;
  }
  if (next != static_cast<int>(big.size()) || op.reassociation.size() != small.size())
    j.error("reassociation does not fit ", shapeToString(in.shape), " -> ",
            shapeToString(out.shape));
  for (size_t g = 0; g < small.size(); ++g) {
    int64_t prod = 1;
    for (int d : op.reassociation[g])
      prod *= big[d];
    if (prod != small[g])
      j.error("reassociation group ", g, " multiplies to ", prod, " but the ",
              collapse ? "result" : "operand", " dim is ", small[g]);
  }
  if (kernelMask_ >= 0 && (in.ragged || out.ragged)) // else define() rejects them
    checkRaggedReshape(j, op, collapse ? in : out, collapse ? out : in);
}

void Parser::checkRaggedReshape(const JsonReader &j, const BodyOp &op, const ValueSpec &big,
                                const ValueSpec &small) {
  const int64_t seq = seqOf(kernelMask_);
  for (size_t g = 0; g < op.reassociation.size(); ++g) {
    int ragged = 0;
    bool outermost = true;
    int64_t factor = 1;
    for (int d : op.reassociation[g]) {
      if (big.isRaggedDim(d)) {
        ++ragged;
        factor *= perSample(big, d) / seq;
      } else {
        factor *= perSample(big, d);
        outermost &= ragged > 0 || perSample(big, d) == 1;
      }
    }
    const bool smallRagged = small.isRaggedDim(static_cast<int>(g));
    if (ragged > 1 || smallRagged != (ragged == 1))
      j[g].error("reassociation group ", g, " maps ", ragged, " ragged dim(s) to a ",
                 smallRagged ? "ragged" : "dense", " dim (", raggedText(big), " vs ",
                 raggedText(small), ")");
    if (ragged == 1 && !outermost)
      j[g].error("reassociation group ", g,
                 " has a non-unit dim outside its ragged dim (the "
                 "sequence index must stay the outermost factor)");
    const int64_t smallFactor = perSample(small, static_cast<int>(g)) / (smallRagged ? seq : 1);
    if (factor != smallFactor)
      j[g].error("reassociation group ", g, " has ", factor, " elements per sample",
                 ragged ? " and token" : "", " on one side but ", smallFactor, " on the other");
  }
}

AffineExpr Parser::parseExpr(const JsonReader &j, int numLoops) {
  j.requireArray();
  AffineExpr e;
  for (size_t i = 0; i < j.size(); ++i) {
    JsonReader t = j[i];
    if (t.isObject()) {
      if (i + 1 != j.size())
        t.error("the constant term must come last");
      e.constant = t.at("const").asIntIn(-(int64_t(1) << 40), int64_t(1) << 40);
      continue;
    }
    t.requireArray();
    if (t.size() != 2)
      t.error("a term is [loop_dim, coefficient]");
    int64_t d = t[0].asInt();
    if (d < 0 || d >= numLoops)
      t[0].error("loop dim d", d, " out of range (the op has ", numLoops, " loops)");
    e.terms.push_back({static_cast<int>(d), t[1].asIntIn(-(int64_t(1) << 31), int64_t(1) << 31)});
  }
  return e;
}

void Parser::parseLinalg(const JsonReader &j, BodyOp &op, int scope) {
  JsonReader ni = j.at("num_inputs");
  op.numInputs = static_cast<int>(ni.asIntIn(0, static_cast<int64_t>(op.operands.size())));
  const size_t numOutputs = op.operands.size() - op.numInputs;
  if (numOutputs == 0)
    ni.error("a linalg op needs at least one output operand");
  if (op.results.size() != numOutputs)
    j.at("results").error(op.results.size(), " results for ", numOutputs, " output operands");
  JsonReader its = j.at("iterators");
  its.requireArray();
  for (size_t i = 0; i < its.size(); ++i) {
    std::string it = its[i].asString();
    if (it != "parallel" && it != "reduction")
      its[i].error("unknown iterator '", it, "' (expected 'parallel' or 'reduction')");
    op.isReduction.push_back(it == "reduction");
  }
  const int numLoops = static_cast<int>(op.isReduction.size());
  JsonReader maps = j.at("maps");
  maps.requireArray();
  if (maps.size() != op.operands.size())
    maps.error(maps.size(), " indexing maps for ", op.operands.size(), " operands");
  std::vector<bool> determined(numLoops, false);
  for (size_t m = 0; m < maps.size(); ++m) {
    JsonReader map = maps[m];
    map.requireArray();
    const ValueSpec &v = s_.values[op.operands[m]];
    if (map.size() != v.shape.size())
      map.error("map has ", map.size(), " results but operand ", m, " (value ", op.operands[m],
                ") has rank ", v.shape.size());
    AffineMap am;
    for (size_t e = 0; e < map.size(); ++e) {
      am.push_back(parseExpr(map[e], numLoops));
      if (am.back().isDim())
        determined[am.back().terms[0].first] = true;
      if (m >= static_cast<size_t>(op.numInputs))
        for (auto [d, c] : am.back().terms)
          if (op.isReduction[d] && c != 0)
            map[e].error("an output indexing map uses reduction loop d", d);
    }
    op.maps.push_back(std::move(am));
  }
  for (int d = 0; d < numLoops; ++d)
    if (!determined[d])
      maps.error("no operand dimension is indexed by d", d, " alone, so its extent is unknown");
  for (size_t o = 0; o < numOutputs; ++o) {
    const int out = op.operands[op.numInputs + o];
    const ValueSpec &ov = s_.values[out], &rv = s_.values[op.results[o]];
    if (ov.shape != rv.shape || ov.dtype != rv.dtype || ov.batchDim != rv.batchDim)
      j.at("results")[o].error("result value ", op.results[o], " (", shapeToString(rv.shape), " ",
                               dtypeName(rv.dtype), ") differs from its init operand ", out, " (",
                               shapeToString(ov.shape), " ", dtypeName(ov.dtype), ")");
    if (ov.ragged != rv.ragged)
      j.at("results")[o].error("result value ", op.results[o], " is ", raggedText(rv),
                               " but its init operand ", out, " is ", raggedText(ov));
  }
  if (kernelMask_ >= 0)
    checkRaggedLoops(j, op, numLoops);
  std::vector<Shape> shapes;
  for (int id : op.operands)
    shapes.push_back(s_.values[id].shape);
  inferLoopBounds(op.maps, numLoops, shapes, s_.source + ": " + j.path());
  parseRegion(j.at("region"), op, scope, numLoops);
}

void Parser::checkRaggedLoops(const JsonReader &j, const BodyOp &op, int numLoops) {
  struct Seen {
    bool ragged = false;
    int64_t factor = -1;
    size_t operand = 0, dim = 0;
  };
  std::vector<Seen> seen(numLoops);
  const int64_t seq = seqOf(kernelMask_);
  for (size_t m = 0; m < op.maps.size(); ++m) {
    const ValueSpec &v = s_.values[op.operands[m]];
    for (size_t e = 0; e < op.maps[m].size(); ++e) {
      if (!op.maps[m][e].isDim())
        continue;
      const int d = op.maps[m][e].terms[0].first;
      const bool ragged = v.isRaggedDim(static_cast<int>(e));
      const int64_t extent = perSample(v, static_cast<int>(e));
      const int64_t factor = ragged ? extent / seq : extent;
      Seen &s = seen[d];
      if (s.factor < 0) {
        s = {ragged, factor, m, e};
        continue;
      }
      auto text = [&](bool r, int64_t f) {
        return r ? std::to_string(f) + " x len" : std::to_string(f);
      };
      if (s.ragged != ragged || s.factor != factor)
        j.at("maps")[m][e].error("loop d", d, " has per-sample extent ", text(s.ragged, s.factor),
                                 " from operand ", s.operand, " dim ", s.dim, " but operand ", m,
                                 " dim ", e, " (value ", op.operands[m], ", ", raggedText(v),
                                 ") has ", text(ragged, factor));
    }
  }
}

char Parser::classOf(DType t) { return isFloat(t) ? 'F' : 'I'; }

void Parser::parseRegion(const JsonReader &j, BodyOp &op, int bodyScope, int numLoops) {
  j.requireObject();
  const int scope = ++nextScope_;
  Region &r = op.region;
  JsonReader args = j.at("args");
  r.args = valueIds(args);
  if (r.args.size() != op.operands.size())
    args.error(r.args.size(), " region arguments for ", op.operands.size(), " operands");
  for (size_t i = 0; i < r.args.size(); ++i) {
    const ValueSpec &a = s_.values[r.args[i]], &o = s_.values[op.operands[i]];
    if (!a.shape.empty())
      args[i].error("region argument ", r.args[i], " must be rank-0");
    if (a.dtype != o.dtype)
      args[i].error("region argument ", r.args[i], " is ", dtypeName(a.dtype), " but operand ", i,
                    " holds ", dtypeName(o.dtype));
    define(r.args[i], scope, args[i]);
  }
  JsonReader ops = j.at("ops");
  ops.requireArray();
  regionOperands_ = static_cast<int64_t>(op.operands.size());
  for (size_t i = 0; i < ops.size(); ++i)
    r.ops.push_back(parseRegionOp(ops[i], scope, bodyScope, numLoops));
  JsonReader yields = j.at("yields");
  r.yields = valueIds(yields);
  const size_t numOutputs = op.operands.size() - op.numInputs;
  if (r.yields.size() != numOutputs)
    yields.error(r.yields.size(), " region yields for ", numOutputs, " outputs");
  for (size_t i = 0; i < r.yields.size(); ++i) {
    use(r.yields[i], scope, bodyScope, yields[i]);
    DType y = s_.values[r.yields[i]].dtype;
    DType o = s_.values[op.operands[op.numInputs + i]].dtype;
    if (y != o)
      yields[i].error("yield of ", dtypeName(y), " into an output of ", dtypeName(o));
  }
}

RegionOp Parser::parseRegionOp(const JsonReader &j, int scope, int bodyScope, int numLoops) {
  j.requireObject();
  RegionOp op;
  JsonReader opj = j.at("op");
  op.name = opj.asString();
  auto it = scalarOps().find(op.name);
  if (it == scalarOps().end())
    opj.error("unsupported region op '", op.name, "'");
  const OpInfo &info = it->second;
  op.kind = info.kind;
  JsonReader operands = j.at("operands"), results = j.at("results");
  op.operands = valueIds(operands);
  op.results = valueIds(results);
  if (info.arity >= 0 && static_cast<int>(op.operands.size()) != info.arity)
    operands.error(op.name, " takes ", info.arity, " operand(s), got ", op.operands.size());
  const size_t numResults = op.kind == ScalarOp::Assert ? 0 : 1;
  if (op.results.size() != numResults)
    results.error(op.name, " has ", numResults == 1 ? "one result" : "no result", ", got ",
                  op.results.size());
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const bool gathered = op.kind == ScalarOp::Extract && i == 0;
    use(op.operands[i], scope, bodyScope, operands[i], gathered);
    if (!s_.values[op.operands[i]].shape.empty() && !gathered)
      operands[i].error("region values must be rank-0");
  }
  if (op.kind == ScalarOp::Extract)
    checkExtract(j, op);
  if (op.kind == ScalarOp::Assert) {
    parseAssert(j, op, scope, bodyScope);
    return op;
  }
  const ValueSpec &res = s_.values[op.results[0]];
  if (!res.shape.empty())
    results[0].error("region values must be rank-0");
  auto cls = [&](size_t i) { return classOf(s_.values[op.operands[i]].dtype); };
  // Operand classes.
  if (op.kind == ScalarOp::Select) {
    if (s_.values[op.operands[0]].dtype != DType::I1)
      operands[0].error("arith.select needs an i1 condition");
    if (s_.values[op.operands[1]].dtype != s_.values[op.operands[2]].dtype ||
        s_.values[op.operands[1]].dtype != res.dtype)
      j.error("arith.select operands and result must have one type");
  } else if (info.operandClass != '*') {
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (cls(i) != info.operandClass)
        operands[i].error(op.name, " needs ",
                          info.operandClass == 'F' ? "floating point" : "integer",
                          " operands, got ", dtypeName(s_.values[op.operands[i]].dtype));
  }
  if (isDivision(op.kind))
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (s_.values[op.operands[i]].dtype == DType::I1)
        operands[i].error(op.name, " divides i64 or index values, got i1");
  // Result class.
  const char rc = info.resultClass;
  if ((rc == 'F' && !isFloat(res.dtype)) || (rc == 'I' && isFloat(res.dtype)) ||
      (rc == 'B' && res.dtype != DType::I1))
    results[0].error(op.name, " cannot produce ", dtypeName(res.dtype));
  switch (op.kind) {
  case ScalarOp::Constant: {
    JsonReader v = j.at("value");
    if (isFloat(res.dtype))
      op.floatValue = v.asReal();
    else if (v.raw().is_boolean())
      op.intValue = v.raw().get<bool>() ? 1 : 0;
    else
      op.intValue = v.asInt();
    break;
  }
  case ScalarOp::CmpF:
  case ScalarOp::CmpI: {
    JsonReader p = j.at("predicate");
    const auto &table = op.kind == ScalarOp::CmpF ? cmpfPredicates() : cmpiPredicates();
    auto pit = table.find(p.asString());
    if (pit == table.end())
      p.error("unknown ", op.name, " predicate '", p.asString(), "'");
    op.predicate = pit->second;
    break;
  }
  case ScalarOp::Index:
    op.dim = static_cast<int>(j.at("dim").asIntIn(0, numLoops - 1));
    break;
  default:
    break;
  }
  define(op.results[0], scope, results[0]);
  return op;
}

void Parser::parseAssert(const JsonReader &j, RegionOp &op, int scope, int bodyScope) {
  JsonReader operands = j.at("operands");
  if (s_.values[op.operands[0]].dtype != DType::I1)
    operands[0].error("cf.assert needs an i1 condition, got ",
                      dtypeName(s_.values[op.operands[0]].dtype));
  op.message = j.at("message").asString();
  if (auto v = j.optional("checked_value")) {
    op.checkedValue = static_cast<int>(v->asIntIn(0, static_cast<int64_t>(s_.values.size()) - 1));
    use(op.checkedValue, scope, bodyScope, *v);
    if (!s_.values[op.checkedValue].shape.empty())
      v->error("region values must be rank-0");
  }
  if (auto o = j.optional("checked_operand"))
    op.checkedOperand = static_cast<int>(o->asIntIn(0, regionOperands_ - 1));
  if (auto input = j.optional("checked_input"))
    op.checkedInput = input->asString();
}

void Parser::checkExtract(const JsonReader &j, const RegionOp &op) {
  JsonReader operands = j.at("operands");
  if (op.operands.empty())
    operands.error("tensor.extract needs a tensor operand");
  const ValueSpec &t = s_.values[op.operands[0]];
  if (t.shape.empty())
    operands[0].error("tensor.extract reads a tensor of rank >= 1");
  if (t.batchDim)
    operands[0].error("tensor.extract cannot gather from a tensor with a batch dim");
  if (op.operands.size() != t.shape.size() + 1)
    operands.error("tensor.extract from a rank-", t.shape.size(), " tensor takes ", t.shape.size(),
                   " indices, got ", op.operands.size() - 1);
  for (size_t i = 1; i < op.operands.size(); ++i)
    if (s_.values[op.operands[i]].dtype != DType::Index)
      operands[i].error("tensor.extract indices must be index values");
  if (s_.values[op.results[0]].dtype != t.dtype)
    j.at("results")[0].error("tensor.extract result type differs from the tensor's");
}

} // namespace wsc::rt::schedule_parser
