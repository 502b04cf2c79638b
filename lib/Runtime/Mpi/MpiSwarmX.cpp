//===- MpiSwarmX.cpp - SwarmX across MPI ranks ----------------------------===//

#include "wsc/Runtime/MpiSwarmX.h"

#include "MpiComm.h"

#include "wsc/Support/Error.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace wsc::rt {
namespace {

constexpr int kMemoryXRank = 0;
constexpr int kPartialTag = 1;
constexpr int kMaxHeaderDims = 14;

bool isHalfWidth(DType t) { return t == DType::F16 || t == DType::BF16; }

void decodeHalfWidth(DType t, const uint16_t *bits, float *out, int64_t n) {
  if (t == DType::F16) {
    halfToFloats(bits, out, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    out[i] = bf16BitsToFloat(bits[i]);
}

/// A 16-bit float tensor's values (held as floats) in their 16-bit encoding,
/// half the bytes on the wire. Every value must be representable: a weight
/// stream is rounded to its dtype in MemoryX.
std::vector<uint16_t> encodeHalfWidth(const Tensor &t) {
  const int64_t n = t.numel();
  const float *in = t.data<float>();
  std::vector<uint16_t> bits(n);
  if (t.dtype() == DType::F16)
    floatsToHalf(in, bits.data(), n);
  else
    for (int64_t i = 0; i < n; ++i)
      bits[i] = floatToBF16Bits(in[i]);
  // Check that nothing was rounded, a block at a time (no second full copy).
  constexpr int64_t kBlock = 4096;
  float back[kBlock];
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = std::min(kBlock, n - i);
    decodeHalfWidth(t.dtype(), bits.data() + i, back, m);
    if (std::memcmp(back, in + i, m * sizeof(float)) != 0)
      fail("internal: a ", dtypeName(t.dtype()), " weight stream holds a value its dtype cannot "
           "represent");
  }
  return bits;
}

/// Broadcasts a CSR pattern from MemoryX's rank into `p` elsewhere; the
/// dims and nnz have already travelled.
void broadcastPattern(const mpi::Comm &comm, sparse::CsrPattern &p, int64_t rows, int64_t cols,
                      int64_t nnz, const char *what) {
  if (comm.rank() != kMemoryXRank) {
    p.rows = rows;
    p.cols = cols;
    p.rowPtr.assign(rows + 1, 0);
    p.colIdx.assign(nnz, 0);
  }
  comm.broadcast(p.rowPtr.data(), p.rowPtr.size() * sizeof(int64_t), kMemoryXRank, what);
  comm.broadcast(p.colIdx.data(), p.colIdx.size() * sizeof(int32_t), kMemoryXRank, what);
}

} // namespace

SystemGroup systemGroupOf(int systems, int ranks, int rank) {
  if (ranks < 1 || ranks > systems)
    fail(ranks, " MPI ranks for ", systems,
         " system(s): every rank runs at least one system (use mpirun -np <= ", systems, ")");
  if (rank < 0 || rank >= ranks)
    fail("internal: rank ", rank, " of ", ranks);
  const int base = systems / ranks, extra = systems % ranks;
  return {rank * base + std::min(rank, extra), base + (rank < extra ? 1 : 0)};
}

MpiSwarmX::MpiSwarmX(const mpi::Comm &comm, int systems)
    : comm_(comm), systems_(systems), group_(systemGroupOf(systems, comm.size(), comm.rank())) {}

bool MpiSwarmX::hostsMemoryX() const { return comm_.rank() == kMemoryXRank; }

std::vector<Tensor> MpiSwarmX::broadcast(const Tensor &fromMemoryX) {
  // A header (dtype, rank, dims), then the values: 16-bit floats travel in
  // 16 bits (a mixed-precision weight stream's bytes halve), the rest as
  // they are held.
  int64_t header[2 + kMaxHeaderDims] = {};
  const bool root = hostsMemoryX();
  if (root) {
    if (fromMemoryX.rank() > kMaxHeaderDims)
      fail("internal: SwarmX broadcasts tensors of rank <= ", kMaxHeaderDims);
    header[0] = static_cast<int64_t>(fromMemoryX.dtype());
    header[1] = fromMemoryX.rank();
    for (int64_t d = 0; d < fromMemoryX.rank(); ++d)
      header[2 + d] = fromMemoryX.shape()[d];
  }
  const char *what = "a weight stream from MemoryX";
  comm_.broadcast(header, sizeof header, kMemoryXRank, what);
  const DType dtype = static_cast<DType>(header[0]);
  Tensor received = root ? fromMemoryX // the root sends from its buffer, never writes it
                         : Tensor::uninitialized(dtype, Shape(header + 2, header + 2 + header[1]));
  if (isHalfWidth(dtype)) {
    std::vector<uint16_t> bits =
        root ? encodeHalfWidth(fromMemoryX) : std::vector<uint16_t>(received.numel());
    comm_.broadcast(bits.data(), bits.size() * sizeof(uint16_t), kMemoryXRank, what);
    if (!root)
      decodeHalfWidth(dtype, bits.data(), received.data<float>(), received.numel());
  } else {
    comm_.broadcast(received.rawData(), received.byteSize(), kMemoryXRank, what);
  }
  return std::vector<Tensor>(group_.count, received);
}

std::vector<SparseStream> MpiSwarmX::broadcast(const SparseStream &fromMemoryX) {
  const bool root = hostsMemoryX();
  int64_t header[8] = {};
  if (root) {
    const sparse::CsrMatrix &m = *fromMemoryX.matrix;
    header[0] = m.rows();
    header[1] = m.cols();
    header[2] = m.nnz();
    header[3] = static_cast<int64_t>(fromMemoryX.order);
    header[4] = static_cast<int64_t>(fromMemoryX.dtype);
    header[5] = fromMemoryX.bytes.values;
    header[6] = fromMemoryX.bytes.indices;
    header[7] = fromMemoryX.bytes.rowCounts;
  }
  const char *what = "a csr weight stream from MemoryX";
  comm_.broadcast(header, sizeof header, kMemoryXRank, what);
  if (root) {
    // The root's arrays are only read by the broadcasts.
    auto &m = const_cast<sparse::CsrMatrix &>(*fromMemoryX.matrix);
    broadcastPattern(comm_, m.pattern, header[0], header[1], header[2], what);
    comm_.broadcast(m.values.data(), m.values.size() * sizeof(float), kMemoryXRank, what);
    return std::vector<SparseStream>(group_.count, fromMemoryX);
  }
  auto m = std::make_shared<sparse::CsrMatrix>();
  broadcastPattern(comm_, m->pattern, header[0], header[1], header[2], what);
  m->values.assign(header[2], 0.0f);
  comm_.broadcast(m->values.data(), m->values.size() * sizeof(float), kMemoryXRank, what);
  SparseStream s;
  s.matrix = std::move(m);
  s.order = static_cast<StreamOrder>(header[3]);
  s.dtype = static_cast<DType>(header[4]);
  s.bytes.values = header[5];
  s.bytes.indices = header[6];
  s.bytes.rowCounts = header[7];
  return std::vector<SparseStream>(group_.count, s);
}

std::vector<GradientRequest> MpiSwarmX::broadcast(const GradientRequest &fromMemoryX) {
  const bool root = hostsMemoryX();
  int64_t header[4] = {};
  if (root) {
    header[0] = fromMemoryX.mask->rows;
    header[1] = fromMemoryX.mask->cols;
    header[2] = fromMemoryX.mask->nnz();
    header[3] = static_cast<int64_t>(fromMemoryX.order);
  }
  const char *what = "a gradient request from MemoryX";
  comm_.broadcast(header, sizeof header, kMemoryXRank, what);
  if (root) {
    broadcastPattern(comm_, const_cast<sparse::CsrPattern &>(*fromMemoryX.mask), header[0],
                     header[1], header[2], what);
    return std::vector<GradientRequest>(group_.count, fromMemoryX);
  }
  auto mask = std::make_shared<sparse::CsrPattern>();
  broadcastPattern(comm_, *mask, header[0], header[1], header[2], what);
  GradientRequest r;
  r.mask = std::move(mask);
  r.order = static_cast<StreamOrder>(header[3]);
  return std::vector<GradientRequest>(group_.count, r);
}

Tensor MpiSwarmX::reduce(const std::vector<Tensor> &partials) {
  if (static_cast<int>(partials.size()) != group_.count)
    fail("internal: SwarmX reduce of ", partials.size(), " tensors over ", group_.count,
         " local systems");
  const int64_t n = partials[0].numel();
  if (n > INT_MAX)
    fail("internal: SwarmX reduces tensors of at most ", INT_MAX, " elements over MPI");
  for (const Tensor &p : partials)
    if (p.storage() != Storage::F32 || p.numel() != n)
      fail("internal: SwarmX reduce of mismatched tensors");
  const char *what = "partial sums to MemoryX";
  if (!hostsMemoryX()) {
    // One message per system, in system order.
    mpi::Comm::Waiting waiting(comm_, what, kMemoryXRank);
    for (const Tensor &p : partials)
      MPI_Send(p.data<float>(), static_cast<int>(n), MPI_FLOAT, kMemoryXRank, kPartialTag,
               MPI_COMM_WORLD);
    return Tensor();
  }
  // Every system's partial, in system order; then the one sum in order.
  std::vector<Tensor> all(partials);
  for (int r = 0; r < comm_.size(); ++r) {
    if (r == kMemoryXRank)
      continue;
    mpi::Comm::Waiting waiting(comm_, what, r);
    const SystemGroup g = systemGroupOf(systems_, comm_.size(), r);
    for (int k = 0; k < g.count; ++k) {
      all.push_back(Tensor::uninitialized(DType::F32, partials[0].shape()));
      MPI_Recv(all.back().data<float>(), static_cast<int>(n), MPI_FLOAT, r, kPartialTag,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  return sumInOrder(all);
}

std::vector<int64_t>
MpiSwarmX::allGather(const std::vector<std::vector<int64_t>> &perLocalSystem) {
  // Ranks hold consecutive systems, so rank order is system order.
  const std::vector<int64_t> mine = concatenate(perLocalSystem);
  return comm_.allGather(mine.data(), static_cast<int>(mine.size()), "VTS lengths");
}

double MpiSwarmX::allMax(double value) { return comm_.allMax(value, "stream bytes"); }

int64_t MpiSwarmX::allSum(int64_t value) { return comm_.allSum(value, "kernel counts"); }

} // namespace wsc::rt
