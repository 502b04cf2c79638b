//===- KernelStreams.cpp - what each kernel streams in weight streaming ---===//

#include "wsc/Analysis/KernelStreams.h"

#include "wsc/Analysis/KernelCost.h"
#include "wsc/Analysis/KernelDescriptions.h"

#include "mlir/IR/Threading.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::wsc;
namespace model = ::wsc::model;

std::vector<KernelStreams> mlir::wsc::kernelStreams(func::FuncOp func, int64_t weightBytes,
                                                    int64_t gradientBytes) {
  DenseSet<Value> gradients;
  Operation *terminator = func.getBody().front().getTerminator();
  for (auto [i, result] : llvm::enumerate(terminator->getOperands()))
    if (func.getResultAttr(i, WSCDialect::getGradAttrName()))
      gradients.insert(result);
  auto elements = [](Value value) {
    auto type = llvm::dyn_cast<ShapedType>(value.getType());
    return type && type.hasStaticShape() ? double(type.getNumElements()) : 0.0;
  };
  std::vector<KernelStreams> streams;
  for (KernelOp kernel : func.getBody().getOps<KernelOp>()) {
    KernelStreams s;
    for (Value input : kernel.getInputs())
      if (auto arg = llvm::dyn_cast<BlockArgument>(input))
        if (func.getArgAttr(arg.getArgNumber(), WSCDialect::getParamAttrName()))
          s.inBytes += elements(input) * double(weightBytes);
    for (Value result : kernel.getResults())
      if (gradients.contains(result)) {
        s.gradientElements += elements(result);
        s.outBytes += elements(result) * double(gradientBytes);
      }
    streams.push_back(s);
  }
  return streams;
}

double mlir::wsc::kernelStreamSeconds(const KernelStreams &s, const model::TargetSpec &target) {
  if (s.inBytes + s.outBytes <= 0)
    return 0;
  double latency =
      double(model::swarmxLevels(target.systems, target.swarmxFanout)) * target.swarmxHopLatency;
  return std::max(model::streamSeconds(s.inBytes, target),
                  model::streamSeconds(s.outBytes, target)) +
         latency;
}

WeightStreamingPass mlir::wsc::weightStreamingPass(func::FuncOp func, const BatchDims &dims,
                                                   int64_t samples,
                                                   ArrayRef<KernelStreams> streams,
                                                   const model::TargetSpec &target,
                                                   const KernelDescriptions *described) {
  SmallVector<Operation *> stepOps;
  SmallVector<KernelOp> kernels;
  for (Operation &op : func.getBody().getOps())
    if (llvm::isa<LayoutConvertOp, KernelOp>(op)) {
      stepOps.push_back(&op);
      if (auto kernel = llvm::dyn_cast<KernelOp>(op))
        kernels.push_back(kernel);
    }
  std::vector<double> cycles(kernels.size());
  parallelFor(func.getContext(), 0, kernels.size(), [&](size_t i) {
    const KernelDescription *description = described ? described->lookup(kernels[i]) : nullptr;
    cycles[i] = estimateKernel(kernels[i], dims, samples, target, description).cycles;
  });
  WeightStreamingPass pass;
  size_t k = 0;
  for (Operation *op : stepOps) {
    if (auto convert = llvm::dyn_cast<LayoutConvertOp>(op)) {
      double seconds = conversionSeconds(convert, dims, samples, target);
      pass.compute += seconds;
      pass.busy += seconds;
      continue;
    }
    const KernelStreams &s = streams[k];
    double streamSeconds = kernelStreamSeconds(s, target);
    double computeSeconds = cycles[k] / target.clockHz;
    pass.compute += computeSeconds;
    pass.busy += std::max(computeSeconds, streamSeconds);
    pass.stream += streamSeconds;
    pass.streamedBytes += s.inBytes + s.outBytes;
    pass.gradientElements += s.gradientElements;
    ++k;
  }
  return pass;
}

double mlir::wsc::conversionSeconds(LayoutConvertOp convert, const BatchDims &dims,
                                    int64_t samples, const model::TargetSpec &target) {
  return moveCycles(convert.getInput(), convert.getFrom(), dims, samples, target) /
         target.clockHz;
}
