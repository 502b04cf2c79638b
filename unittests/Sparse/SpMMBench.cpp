//===- SpMMBench.cpp - Sparse Linear forward + backward vs dense BLAS ------===//
//
//   build/bin/WSCSparseBench [--threads N] [--reps R] [--size S] [--batch M]
//                            [--json]
//
// For a S x S Linear layer (default 4096) at batch M (default 64) and
// sparsity 0, 0.5, 0.75, 0.9, 0.95 (uniformly random mask), times one
// forward + backward step:
//   dense:  three cblas_sgemm calls on the masked weight (y = x W^T,
//           dx = dy W, dW = dy^T x);
//   sparse: spmmForward + sparseLinearBackward (y, dx, and dW at the mask
//           only), from W and its transposed view W^T;
//   refresh: regathering W^T's values from W's after an update (what a
//           MemoryX that keeps one copy of the values does per step).
// Prints the median of R steps of each, their ratio, and the stream bytes of
// W (CSR FP16 + 16-bit indices + 4-byte row counts) over a dense FP16 stream.
// The sparse kernels are timed before BLAS runs (its idle threads spin on the
// cores for a while after each call).
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Threads.h"
#include "wsc/Sparse/SpMM.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

using namespace wsc::sparse;

namespace {

template <typename F> double medianSeconds(int reps, const F &f) {
  f(); // warm up
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void check(const Status &s) {
  if (!s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    std::exit(1);
  }
}

double maxRelError(const std::vector<float> &got, const std::vector<float> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    num = std::max(num, double(std::fabs(got[i] - want[i])));
    den = std::max(den, double(std::fabs(want[i])));
  }
  return den == 0 ? num : num / den;
}

} // namespace

int main(int argc, char **argv) {
  int threads = 1, reps = 10;
  int64_t S = 4096, M = 64;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--threads"))
      threads = std::atoi(next());
    else if (!std::strcmp(argv[i], "--reps"))
      reps = std::atoi(next());
    else if (!std::strcmp(argv[i], "--size"))
      S = std::atoll(next());
    else if (!std::strcmp(argv[i], "--batch"))
      M = std::atoll(next());
    else if (!std::strcmp(argv[i], "--json"))
      json = true;
    else {
      std::fprintf(stderr,
                   "usage: WSCSparseBench [--threads N] [--reps R] [--size S] [--batch M] "
                   "[--json]\n");
      return 2;
    }
  }
  threads = std::max(threads, 1);
  reps = std::max(reps, 1);
  wsc::rt::setNumThreads(threads);
  const SpmmOptions opts{threads};
  const int64_t N = S, K = S;

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> w(N * K), x(M * K), dy(M * N);
  for (float &v : w)
    v = value(rng);
  for (float &v : x)
    v = value(rng);
  for (float &v : dy)
    v = value(rng);

  if (!json) {
    std::printf("Linear %lldx%lld, batch %lld, %d thread(s); median of %d steps "
                "(forward + backward)\n",
                (long long)N, (long long)K, (long long)M, threads, reps);
    std::printf("%8s %8s %10s %10s %8s %10s %8s %10s %10s\n", "sparsity", "density",
                "dense ms", "sparse ms", "speedup", "refresh ms", "w/refr.", "stream/dns",
                "max rel err");
  }
  for (double sparsity : {0.0, 0.5, 0.75, 0.9, 0.95}) {
    std::mt19937 maskRng(2);
    std::bernoulli_distribution keep(1.0 - sparsity);
    std::vector<float> wd(w.size());
    for (size_t i = 0; i < w.size(); ++i)
      wd[i] = keep(maskRng) ? w[i] : 0.0f;
    std::vector<uint8_t> bits(wd.size());
    for (size_t i = 0; i < wd.size(); ++i)
      bits[i] = wd[i] != 0.0f;
    const CsrPattern mask = patternFromMask(bits, N, K).value();
    CsrMatrix W = gatherMasked(wd.data(), mask);
    const TransposedPattern tp = transposePattern(mask);
    CsrMatrix Wt{tp.pattern, std::vector<float>(tp.pattern.nnz())};
    gatherTransposedValues(tp, W.values.data(), Wt.values.data());

    std::vector<float> ys(M * N), dxs(M * K), dws(mask.nnz());
    const double sparse = medianSeconds(reps, [&] {
      check(spmmForward(x.data(), M, W, ys.data(), opts));
      check(sparseLinearBackward(dy.data(), x.data(), M, Wt, mask, dxs.data(), dws.data(),
                                 opts));
    });
    const double refresh = medianSeconds(
        reps, [&] { gatherTransposedValues(tp, W.values.data(), Wt.values.data()); });

    std::vector<float> y(M * N), dx(M * K), dW(N * K);
    const double dense = medianSeconds(reps, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(M), int(N), int(K), 1.0f,
                  x.data(), int(K), wd.data(), int(K), 0.0f, y.data(), int(N));
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(M), int(K), int(N), 1.0f,
                  dy.data(), int(N), wd.data(), int(K), 0.0f, dx.data(), int(K));
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(N), int(K), int(M), 1.0f,
                  dy.data(), int(N), x.data(), int(K), 0.0f, dW.data(), int(K));
    });

    // OpenBLAS's idle threads spin for a while after a call and would take the
    // cores from the next sparsity's kernels: let them go to sleep.
    if (threads > 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(500));

    double err = std::max(maxRelError(ys, y), maxRelError(dxs, dx));
    err = std::max(err, maxRelError(dws, gatherMasked(dW.data(), mask).values));
    const double streamRatio =
        double(predictStreamBytes(mask).total()) / double(denseStreamBytes(N, K));
    if (json)
      std::printf("{\"threads\": %d, \"sparsity\": %.2f, \"density\": %.4f, \"dense_s\": %.6g, "
                  "\"sparse_s\": %.6g, \"refresh_s\": %.6g, \"stream_ratio\": %.5f, "
                  "\"max_rel_err\": %.3g}\n",
                  threads, sparsity, mask.density(), dense, sparse, refresh, streamRatio, err);
    else
      std::printf("%8.2f %8.4f %10.2f %10.2f %7.2fx %10.2f %7.2fx %10.4f %10.2g\n", sparsity,
                  mask.density(), dense * 1e3, sparse * 1e3, dense / sparse, refresh * 1e3,
                  dense / (sparse + refresh), streamRatio, err);
    std::fflush(stdout);
  }
  return 0;
}
