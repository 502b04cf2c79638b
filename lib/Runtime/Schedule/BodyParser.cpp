//===- BodyParser.cpp - Schedule parser: kernel bodies ----------------------===//

#include "BodyParser.h"

#include "../LoopBounds.h"

#include <algorithm>
#include <limits>

namespace wsc::rt::schedule_parser {

void BodyParser::parse(const JsonReader &body, Step &st) {
  body.requireObject();
  const int scope = scopes_.newScope();
  scopes_.setKernelMask(st.mask);
  JsonReader args = body.at(key::block::kArgs);
  st.body.args = scopes_.valueIds(args);
  if (st.body.args.size() != st.operands.size())
    args.error(st.body.args.size(), " body arguments for ", st.operands.size(), " operands");
  // A non-batch operand's body argument may be ragged: each sample reads
  // its leading block.
  for (size_t i = 0; i < st.body.args.size(); ++i) {
    scopes_.sameSpec(st.body.args[i], st.operands[i], args[i], "body argument vs operand",
                     s_.values[st.operands[i]].batchDim.has_value());
    scopes_.define(st.body.args[i], scope, args[i]);
  }
  JsonReader ops = body.at(key::block::kOps);
  ops.requireArray();
  for (size_t i = 0; i < ops.size(); ++i)
    st.body.ops.push_back(parseBodyOp(ops[i], scope));
  JsonReader yields = body.at(key::block::kYields);
  st.body.yields = scopes_.valueIds(yields);
  if (st.body.yields.size() != st.results.size())
    yields.error(st.body.yields.size(), " yields for ", st.results.size(), " results");
  // A non-batch yield may be ragged: it is summed, zero-extended, over
  // the samples.
  for (size_t i = 0; i < st.body.yields.size(); ++i) {
    scopes_.use(st.body.yields[i], scope, kUndefined, yields[i]);
    scopes_.sameSpec(st.body.yields[i], st.results[i], yields[i], "yield vs kernel result",
                     s_.values[st.results[i]].batchDim.has_value());
  }
  scopes_.setKernelMask(-1);
}

void BodyParser::expectCounts(const JsonReader &j, const BodyOp &op, size_t operands, size_t results) {
  if (op.operands.size() != operands)
    j.error(op.name, " takes ", operands, " operand(s), got ", op.operands.size());
  if (op.results.size() != results)
    j.error(op.name, " has ", results, " result(s), got ", op.results.size());
}

BodyOp BodyParser::parseBodyOp(const JsonReader &j, int scope) {
  j.requireObject();
  BodyOp op;
  op.path = j.path();
  JsonReader opj = j.at(key::body_op::kOp);
  std::string name = opj.asString();
  op.name = name;
  JsonReader operands = j.at(key::body_op::kOperands), results = j.at(key::body_op::kResults);
  op.operands = scopes_.valueIds(operands);
  op.results = scopes_.valueIds(results);
  for (size_t i = 0; i < op.operands.size(); ++i)
    scopes_.use(op.operands[i], scope, kUndefined, operands[i]);
  const std::optional<BodyOpKind> kind = schedule::parse<BodyOpKind>(name);
  if (!kind) {
    using schedule::stringify;
    opj.error("unknown kernel body op '", name, "' (expected ",
              schedule::listNames({stringify(BodyOpKind::Empty), stringify(BodyOpKind::Constant),
                                   stringify(BodyOpKind::CollapseShape),
                                   stringify(BodyOpKind::ExpandShape),
                                   stringify(BodyOpKind::ExtractSlice),
                                   stringify(BodyOpKind::InsertSlice),
                                   stringify(BodyOpKind::Linalg)}),
              ")");
  }
  op.kind = *kind;
  switch (op.kind) {
  case BodyOpKind::Empty:
    expectCounts(j, op, 0, 1);
    break;
  case BodyOpKind::Constant:
    expectCounts(j, op, 0, 1);
    parseConstantValue(j.at(key::body_op::kValue), op);
    break;
  case BodyOpKind::CollapseShape:
  case BodyOpKind::ExpandShape:
    expectCounts(j, op, 1, 1);
    parseReassociation(j.at(key::body_op::kReassociation), op);
    break;
  case BodyOpKind::ExtractSlice:
  case BodyOpKind::InsertSlice:
    expectCounts(j, op, op.kind == BodyOpKind::ExtractSlice ? 1 : 2, 1);
    parseSlice(j, op);
    break;
  case BodyOpKind::Linalg:
    op.name = j.at(key::body_op::kName).asString();
    parseLinalg(j, op, scope);
    break;
  }
  for (size_t i = 0; i < op.results.size(); ++i)
    scopes_.define(op.results[i], scope, results[i]);
  return op;
}

void BodyParser::parseConstantValue(const JsonReader &v, BodyOp &op) {
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

void BodyParser::parseSlice(const JsonReader &j, BodyOp &op) {
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
  list(key::body_op::kOffsets, op.offsets, 0);
  list(key::body_op::kSizes, op.sizes, 0);
  list(key::body_op::kStrides, op.strides, 1);
  for (size_t d = 0; d < rank; ++d)
    if (op.sizes[d] && op.offsets[d] + (op.sizes[d] - 1) * op.strides[d] >= full.shape[d])
      j.at(key::body_op::kSizes)[d].error("slice dim ", d, " (offset ", op.offsets[d], ", size ", op.sizes[d],
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
      j.at(key::body_op::kOffsets)[d].error("slice dim ", d, " is ragged but starts at ", op.offsets[d],
                               " with stride ", op.strides[d],
                               " (only a prefix of a ragged dim is valid: offset 0, stride 1)");
    if (pieceRagged && fullRagged && scopes_.perSample(piece, p) != scopes_.perSample(full, static_cast<int>(d)))
      j.at(key::body_op::kSizes)[d].error("slice dim ", d, " takes part of a ragged dim as a ragged dim");
  }
  if (full.batchDim) {
    const int b = *full.batchDim;
    // Each system holds a shard of the batch dim, so a slice must take it
    // whole; with one sample in the whole batch there is no shard, and a
    // batch dim that merges the sample's rows (JAX folds a batch of one into
    // the image's height) may be sliced like any other. When one system
    // runs the whole batch at once, a slice of some samples holds those
    // samples, and has no batch dim.
    const bool part = op.offsets[b] != 0 || op.strides[b] != 1 || op.sizes[b] != full.shape[b];
    const bool wholeBatchAtOnce = s_.systems == 1 && s_.microBatches() == 1 && !full.ragged;
    if (s_.globalBatch > 1 && part && (!wholeBatchAtOnce || piece.batchDim))
      j.error("a slice must take the batch dim ", b,
              " whole, unless one system runs the whole batch at once (no micro-batches) and "
              "the piece, those samples, has no batch dim");
    if (!(s_.globalBatch > 1 && part) && (!piece.batchDim || kept[*piece.batchDim] != b))
      j.error("the slice's batch dim does not line up with dim ", b);
  } else if (piece.batchDim) {
    j.error("the slice has a batch dim but the full tensor has none");
  }
}

void BodyParser::parseReassociation(const JsonReader &j, BodyOp &op) {
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
  if (scopes_.kernelMask() >= 0 && (in.ragged || out.ragged)) // else scopes_.define() rejects them
    checkRaggedReshape(j, op, collapse ? in : out, collapse ? out : in);
}

void BodyParser::checkRaggedReshape(const JsonReader &j, const BodyOp &op, const ValueSpec &big,
                                const ValueSpec &small) {
  const int64_t seq = scopes_.seqOf(scopes_.kernelMask());
  for (size_t g = 0; g < op.reassociation.size(); ++g) {
    int ragged = 0;
    bool outermost = true;
    int64_t factor = 1;
    for (int d : op.reassociation[g]) {
      if (big.isRaggedDim(d)) {
        ++ragged;
        factor *= scopes_.perSample(big, d) / seq;
      } else {
        factor *= scopes_.perSample(big, d);
        outermost &= ragged > 0 || scopes_.perSample(big, d) == 1;
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
    const int64_t smallFactor = scopes_.perSample(small, static_cast<int>(g)) / (smallRagged ? seq : 1);
    if (factor != smallFactor)
      j[g].error("reassociation group ", g, " has ", factor, " elements per sample",
                 ragged ? " and token" : "", " on one side but ", smallFactor, " on the other");
  }
}

AffineExpr BodyParser::parseExpr(const JsonReader &j, int numLoops) {
  j.requireArray();
  AffineExpr e;
  for (size_t i = 0; i < j.size(); ++i) {
    JsonReader t = j[i];
    if (t.isObject()) {
      if (i + 1 != j.size())
        t.error("the constant term must come last");
      e.constant = t.at(key::body_op::kConst).asIntIn(-(int64_t(1) << 40), int64_t(1) << 40);
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

void BodyParser::parseLinalg(const JsonReader &j, BodyOp &op, int scope) {
  JsonReader ni = j.at(key::body_op::kNumInputs);
  op.numInputs = static_cast<int>(ni.asIntIn(0, static_cast<int64_t>(op.operands.size())));
  const size_t numOutputs = op.operands.size() - op.numInputs;
  if (numOutputs == 0)
    ni.error("a linalg op needs at least one output operand");
  if (op.results.size() != numOutputs)
    j.at(key::body_op::kResults).error(op.results.size(), " results for ", numOutputs, " output operands");
  JsonReader its = j.at(key::body_op::kIterators);
  its.requireArray();
  for (size_t i = 0; i < its.size(); ++i) {
    using schedule::IteratorKind;
    std::string it = its[i].asString();
    const std::optional<IteratorKind> kind = schedule::parse<IteratorKind>(it);
    if (!kind)
      its[i].error("unknown iterator '", it, "' (expected ",
                   schedule::listNames({schedule::stringify(IteratorKind::Parallel),
                                        schedule::stringify(IteratorKind::Reduction)},
                                       /*quote=*/true),
                   ")");
    op.isReduction.push_back(*kind == IteratorKind::Reduction);
  }
  const int numLoops = static_cast<int>(op.isReduction.size());
  JsonReader maps = j.at(key::body_op::kMaps);
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
      j.at(key::body_op::kResults)[o].error("result value ", op.results[o], " (", shapeToString(rv.shape), " ",
                               dtypeName(rv.dtype), ") differs from its init operand ", out, " (",
                               shapeToString(ov.shape), " ", dtypeName(ov.dtype), ")");
    if (ov.ragged != rv.ragged)
      j.at(key::body_op::kResults)[o].error("result value ", op.results[o], " is ", raggedText(rv),
                               " but its init operand ", out, " is ", raggedText(ov));
  }
  if (scopes_.kernelMask() >= 0)
    checkRaggedLoops(j, op, numLoops);
  std::vector<Shape> shapes;
  for (int id : op.operands)
    shapes.push_back(s_.values[id].shape);
  inferLoopBounds(op.maps, numLoops, shapes, s_.source + ": " + j.path());
  parseRegion(j.at(key::body_op::kRegion), op, scope, numLoops);
}

void BodyParser::checkRaggedLoops(const JsonReader &j, const BodyOp &op, int numLoops) {
  struct Seen {
    bool ragged = false;
    int64_t factor = -1;
    size_t operand = 0, dim = 0;
  };
  std::vector<Seen> seen(numLoops);
  const int64_t seq = scopes_.seqOf(scopes_.kernelMask());
  for (size_t m = 0; m < op.maps.size(); ++m) {
    const ValueSpec &v = s_.values[op.operands[m]];
    for (size_t e = 0; e < op.maps[m].size(); ++e) {
      if (!op.maps[m][e].isDim())
        continue;
      const int d = op.maps[m][e].terms[0].first;
      const bool ragged = v.isRaggedDim(static_cast<int>(e));
      const int64_t extent = scopes_.perSample(v, static_cast<int>(e));
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
        j.at(key::body_op::kMaps)[m][e].error("loop d", d, " has per-sample extent ", text(s.ragged, s.factor),
                                 " from operand ", s.operand, " dim ", s.dim, " but operand ", m,
                                 " dim ", e, " (value ", op.operands[m], ", ", raggedText(v),
                                 ") has ", text(ragged, factor));
    }
  }
}

void BodyParser::parseRegion(const JsonReader &j, BodyOp &op, int bodyScope, int numLoops) {
  j.requireObject();
  const int scope = scopes_.newScope();
  Region &r = op.region;
  JsonReader args = j.at(key::block::kArgs);
  r.args = scopes_.valueIds(args);
  if (r.args.size() != op.operands.size())
    args.error(r.args.size(), " region arguments for ", op.operands.size(), " operands");
  for (size_t i = 0; i < r.args.size(); ++i) {
    const ValueSpec &a = s_.values[r.args[i]], &o = s_.values[op.operands[i]];
    if (!a.shape.empty())
      args[i].error("region argument ", r.args[i], " must be rank-0");
    if (a.dtype != o.dtype)
      args[i].error("region argument ", r.args[i], " is ", dtypeName(a.dtype), " but operand ", i,
                    " holds ", dtypeName(o.dtype));
    scopes_.define(r.args[i], scope, args[i]);
  }
  JsonReader ops = j.at(key::block::kOps);
  ops.requireArray();
  regionOperands_ = static_cast<int64_t>(op.operands.size());
  regionOps_ = &r.ops;
  batchLoops_.assign(numLoops, false);
  for (size_t m = 0; m < op.maps.size() && m < op.operands.size(); ++m)
    if (std::optional<int> b = s_.values[op.operands[m]].batchDim)
      if (*b < static_cast<int>(op.maps[m].size()) && op.maps[m][*b].isDim())
        batchLoops_[op.maps[m][*b].terms[0].first] = true;
  for (size_t i = 0; i < ops.size(); ++i)
    r.ops.push_back(parseRegionOp(ops[i], scope, bodyScope, numLoops));
  JsonReader yields = j.at(key::block::kYields);
  r.yields = scopes_.valueIds(yields);
  const size_t numOutputs = op.operands.size() - op.numInputs;
  if (r.yields.size() != numOutputs)
    yields.error(r.yields.size(), " region yields for ", numOutputs, " outputs");
  for (size_t i = 0; i < r.yields.size(); ++i) {
    scopes_.use(r.yields[i], scope, bodyScope, yields[i]);
    DType y = s_.values[r.yields[i]].dtype;
    DType o = s_.values[op.operands[op.numInputs + i]].dtype;
    if (y != o)
      yields[i].error("yield of ", dtypeName(y), " into an output of ", dtypeName(o));
  }
}

RegionOp BodyParser::parseRegionOp(const JsonReader &j, int scope, int bodyScope, int numLoops) {
  j.requireObject();
  RegionOp op;
  JsonReader opj = j.at(key::region_op::kOp);
  op.name = opj.asString();
  const schedule::ScalarOpInfo *found = schedule::lookupScalarOp(op.name);
  if (!found)
    opj.error("unsupported region op '", op.name, "'");
  const schedule::ScalarOpInfo &info = *found;
  op.kind = info.kind;
  JsonReader operands = j.at(key::region_op::kOperands), results = j.at(key::region_op::kResults);
  op.operands = scopes_.valueIds(operands);
  op.results = scopes_.valueIds(results);
  if (info.arity >= 0 && static_cast<int>(op.operands.size()) != info.arity)
    operands.error(op.name, " takes ", info.arity, " operand(s), got ", op.operands.size());
  const size_t numResults = op.kind == ScalarOp::Assert ? 0 : 1;
  if (op.results.size() != numResults)
    results.error(op.name, " has ", numResults == 1 ? "one result" : "no result", ", got ",
                  op.results.size());
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const bool gathered = op.kind == ScalarOp::Extract && i == 0;
    scopes_.use(op.operands[i], scope, bodyScope, operands[i], gathered);
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
  using schedule::TypeClass;
  auto cls = [&](size_t i) {
    return isFloat(s_.values[op.operands[i]].dtype) ? TypeClass::Float : TypeClass::Integer;
  };
  // Operand classes.
  if (op.kind == ScalarOp::Select) {
    if (s_.values[op.operands[0]].dtype != DType::I1)
      operands[0].error("arith.select needs an i1 condition");
    if (s_.values[op.operands[1]].dtype != s_.values[op.operands[2]].dtype ||
        s_.values[op.operands[1]].dtype != res.dtype)
      j.error("arith.select operands and result must have one type");
  } else if (info.operands != TypeClass::Any) {
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (cls(i) != info.operands)
        operands[i].error(op.name, " needs ",
                          info.operands == TypeClass::Float ? "floating point" : "integer",
                          " operands, got ", dtypeName(s_.values[op.operands[i]].dtype));
  }
  if (schedule::isDivision(op.kind))
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (s_.values[op.operands[i]].dtype == DType::I1)
        operands[i].error(op.name, " divides i64 or index values, got i1");
  // Result class.
  const TypeClass rc = info.result;
  if ((rc == TypeClass::Float && !isFloat(res.dtype)) ||
      (rc == TypeClass::Integer && isFloat(res.dtype)) ||
      (rc == TypeClass::Bool && res.dtype != DType::I1))
    results[0].error(op.name, " cannot produce ", dtypeName(res.dtype));
  switch (op.kind) {
  case ScalarOp::Constant: {
    JsonReader v = j.at(key::region_op::kValue);
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
    JsonReader p = j.at(key::region_op::kPredicate);
    const std::optional<CmpPredicate> predicate =
        op.kind == ScalarOp::CmpF ? schedule::parseCmpFPredicate(p.asString())
                                  : schedule::parseCmpIPredicate(p.asString());
    if (!predicate)
      p.error("unknown ", op.name, " predicate '", p.asString(), "'");
    op.predicate = *predicate;
    break;
  }
  case ScalarOp::Index:
    op.dim = static_cast<int>(j.at(key::region_op::kDim).asIntIn(0, numLoops - 1));
    break;
  default:
    break;
  }
  scopes_.define(op.results[0], scope, results[0]);
  return op;
}

void BodyParser::parseAssert(const JsonReader &j, RegionOp &op, int scope, int bodyScope) {
  JsonReader operands = j.at(key::region_op::kOperands);
  if (s_.values[op.operands[0]].dtype != DType::I1)
    operands[0].error("cf.assert needs an i1 condition, got ",
                      dtypeName(s_.values[op.operands[0]].dtype));
  op.message = j.at(key::region_op::kMessage).asString();
  if (auto v = j.optional(key::region_op::kCheckedValue)) {
    op.checkedValue = static_cast<int>(v->asIntIn(0, static_cast<int64_t>(s_.values.size()) - 1));
    scopes_.use(op.checkedValue, scope, bodyScope, *v);
    if (!s_.values[op.checkedValue].shape.empty())
      v->error("region values must be rank-0");
  }
  if (auto o = j.optional(key::region_op::kCheckedOperand))
    op.checkedOperand = static_cast<int>(o->asIntIn(0, regionOperands_ - 1));
  if (auto input = j.optional(key::region_op::kCheckedInput))
    op.checkedInput = input->asString();
}

void BodyParser::checkExtract(const JsonReader &j, const RegionOp &op) {
  JsonReader operands = j.at(key::region_op::kOperands);
  if (op.operands.empty())
    operands.error("tensor.extract needs a tensor operand");
  const ValueSpec &t = s_.values[op.operands[0]];
  if (t.shape.empty())
    operands[0].error("tensor.extract reads a tensor of rank >= 1");
  if (op.operands.size() != t.shape.size() + 1)
    operands.error("tensor.extract from a rank-", t.shape.size(), " tensor takes ", t.shape.size(),
                   " indices, got ", op.operands.size() - 1);
  for (size_t i = 1; i < op.operands.size(); ++i)
    if (s_.values[op.operands[i]].dtype != DType::Index)
      operands[i].error("tensor.extract indices must be index values");
  if (s_.values[op.results[0]].dtype != t.dtype)
    j.at(key::region_op::kResults)[0].error("tensor.extract result type differs from the tensor's");
  // A batched tensor holds the local samples only: a gather reads its own
  // sample's rows, by the batch loop's linalg.index, of samples whole.
  if (t.batchDim) {
    const int loop = indexLoopOf(*regionOps_, op.operands[1 + *t.batchDim]);
    if (loop < 0 || loop >= static_cast<int>(batchLoops_.size()) || !batchLoops_[loop])
      operands[1 + *t.batchDim].error("tensor.extract from a tensor with a batch dim (dim ",
                                      *t.batchDim, ") must index it by linalg.index of a batch "
                                      "loop: each system holds only its own samples");
  }
}

} // namespace wsc::rt::schedule_parser
