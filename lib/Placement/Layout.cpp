//===- Layout.cpp - how a kernel lays its tensors out, and adapters -------===//

#include "wsc/Placement/Layout.h"

namespace wsc::place {

const std::vector<size_t> &layoutArgs(KernelKind kind, bool output) {
  // Execution args: conv (h w c k); dblock (h w c1 c2 c3 k1 k2 k3); cblock
  // (h w c1 c2 c3 c4 k1 k2 k3 k4), whose input is read by its first conv
  // and whose output is its third conv's (the shortcut adds into it);
  // matmul (m k n) reading x[M, K] and writing y[M, N]; attention (q kv a)
  // over [L][A*D] tokens by heads; norm (f n) over [N][F]; eltwise (r c), a
  // flat tensor on an r x c grid.
  static const std::vector<size_t> convIn = {0, 1, 2}, convOut = {0, 1, 3};
  static const std::vector<size_t> dblockOut = {0, 1, 7}, cblockOut = {0, 1, 8};
  static const std::vector<size_t> matmulIn = {0, 1}, matmulOut = {0, 2};
  static const std::vector<size_t> attention = {0, 2}, norm = {1, 0}, eltwise = {0, 1};
  switch (kind) {
  case KernelKind::Conv:
    return output ? convOut : convIn;
  case KernelKind::DBlock:
    return output ? dblockOut : convIn;
  case KernelKind::CBlock:
    return output ? cblockOut : convIn;
  case KernelKind::Matmul:
    return output ? matmulOut : matmulIn;
  case KernelKind::Attention:
    return attention;
  case KernelKind::Norm:
    return norm;
  case KernelKind::Eltwise:
    return eltwise;
  }
  return eltwise;
}

bool needsAdapter(const Kernel &producer, const std::vector<int64_t> &producerExec,
                  const Kernel &consumer, const std::vector<int64_t> &consumerExec) {
  const std::vector<size_t> &out = layoutArgs(producer.kind, true);
  const std::vector<size_t> &in = layoutArgs(consumer.kind, false);
  if (out.size() != in.size())
    return true;
  for (size_t d = 0; d < out.size(); ++d)
    if (out[d] >= producerExec.size() || in[d] >= consumerExec.size() ||
        producerExec[out[d]] != consumerExec[in[d]])
      return true;
  return false;
}

int64_t countAdapters(const Problem &problem, const Placement &placement) {
  int64_t count = 0;
  for (auto [a, b] : problem.edges)
    count += needsAdapter(problem.kernels[size_t(a)], placement.kernels[size_t(a)].exec,
                          problem.kernels[size_t(b)], placement.kernels[size_t(b)].exec);
  return count;
}

} // namespace wsc::place
