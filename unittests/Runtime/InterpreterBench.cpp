//===- InterpreterBench.cpp - Interpreter speed vs raw BLAS / loops --------===//
//
//   build-rt/bin/WSCRuntimeBench [threads]
//
// Times a 256x1024x1024 linalg.matmul through the interpreter against a
// direct cblas_sgemm call, and a bias-add + ReLU linalg.generic over
// 256x1024 against a plain C++ loop.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Interpreter.h"
#include "wsc/Runtime/Threads.h"

#include "TestUtil.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

template <typename F> double bestOf(int reps, F f) {
  f();
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  setNumThreads(threads);
  const int M = 256, N = 1024, K = 1024;

  // Matmul: fill-zero init + linalg.matmul (x @ w^T, the forward layout).
  {
    KernelBuilder b;
    int x = b.param({M, K}), w = b.param({N, K});
    int e = b.empty({M, N});
    int z = b.linalg1("linalg.fill", {}, e, {"parallel", "parallel"}, {{d(0), d(1)}},
                      [](RegionBuilder &r) { return r.fconst(0.0); });
    int out = b.linalg1("linalg.matmul", {x, w}, z, {"parallel", "parallel", "reduction"},
                        {{d(0), d(2)}, {d(1), d(2)}, {d(0), d(1)}}, mulAdd);
    Schedule s = b.build({out});
    Interpreter interp(s);
    Tensor X = randomTensor({M, K}, 1), W = randomTensor({N, K}, 2);
    double tInterp = bestOf(20, [&] { interp.runKernel(b.kernelStep(), {X, W}, {1, 0}); });
    Tensor C = Tensor::zeros(DType::F32, {M, N});
    double tBlas = bestOf(20, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, X.data<float>(), K,
                  W.data<float>(), K, 0.0f, C.data<float>(), N);
    });
    std::printf("matmul %dx%dx%d (threads %d): interpreter %.3f ms, cblas_sgemm %.3f ms, ratio %.3f "
                "(%.1f GFLOP/s)\n",
                M, N, K, threads, tInterp * 1e3, tBlas * 1e3, tInterp / tBlas,
                2.0 * M * N * K / tInterp * 1e-9);
  }

  // Elementwise: relu(x + bias) over 256x1024 with a broadcast bias.
  {
    KernelBuilder b;
    int x = b.param({M, N}), bias = b.param({N});
    int e = b.empty({M, N});
    int out = b.linalg1("linalg.generic", {x, bias}, e, {"parallel", "parallel"},
                        {{d(0), d(1)}, {d(1)}, {d(0), d(1)}}, [](RegionBuilder &r) {
                          int s = r.bin("arith.addf", r.args[0], r.args[1]);
                          return r.bin("arith.maximumf", s, r.fconst(0.0));
                        });
    Schedule s = b.build({out});
    Interpreter interp(s);
    Tensor X = randomTensor({M, N}, 3), B = randomTensor({N}, 4);
    double tInterp = bestOf(50, [&] { interp.runKernel(b.kernelStep(), {X, B}, {1, 0}); });
    std::vector<float> y(M * N);
    double tLoop = bestOf(50, [&] {
      const float *px = X.data<float>(), *pb = B.data<float>();
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
          y[i * N + j] = std::max(px[i * N + j] + pb[j], 0.0f);
    });
    std::printf("elementwise bias+relu %dx%d: interpreter %.3f ms (%.2f ns/element), plain loop "
                "%.3f ms, ratio %.2f\n",
                M, N, tInterp * 1e3, tInterp / (M * N) * 1e9, tLoop * 1e3, tInterp / tLoop);
  }
  return 0;
}
