//===- BatchFile.cpp - wsc-run's training and inference data files --------===//

#include "wsc/Runtime/BatchFile.h"

#include "wsc/Support/Error.h"

namespace wsc::rt {

std::string fileDTypeFor(DType t) {
  switch (storageOf(t)) {
  case Storage::F32: return "F32";
  case Storage::I64: return "I64";
  case Storage::U8: return "BOOL";
  }
  return "F32";
}

BatchFile::BatchFile(const Schedule &s, const std::string &path, bool allowStacked)
    : schedule_(s), file_(path) {
  std::string firstName;
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    const InputSpec &in = s.inputs[i];
    if (!file_.entries().count(in.name))
      fail(path, ": missing tensor '", in.name, "' (schedule input ", i, ")");
    const SafeTensorEntry &e = file_.entry(in.name);
    const std::string want = fileDTypeFor(in.dtype);
    if (e.fileDType != want)
      fail(path, ": tensor '", in.name, "' has dtype ", e.fileDType, ", expected ", want);
    int64_t count = 1;
    if (e.shape == in.shape) {
      count = 1;
    } else if (allowStacked && e.shape.size() == in.shape.size() + 1 && e.shape[0] >= 1 &&
               Shape(e.shape.begin() + 1, e.shape.end()) == in.shape) {
      count = e.shape[0];
    } else {
      fail(path, ": tensor '", in.name, "' has shape ", shapeToString(e.shape), ", expected ",
           allowStacked ? "[S, " + shapeToString(in.shape).substr(1) + " or " : std::string(),
           shapeToString(in.shape));
    }
    if (i > 0 && count != batches_)
      fail(path, ": tensor '", in.name, "' holds ", count, " batches but '", firstName,
           "' holds ", batches_);
    if (i == 0) {
      batches_ = count;
      firstName = in.name;
    }
  }
}

std::vector<Tensor> BatchFile::read(int64_t i, BatchShard samples) {
  if (samples.begin < 0 || samples.size < 0 ||
      samples.begin + samples.size > schedule_.globalBatch)
    fail("internal: samples [", samples.begin, ", ", samples.begin + samples.size,
         ") of a batch of ", schedule_.globalBatch);
  const int64_t batch = i % batches_;
  std::vector<Tensor> inputs;
  for (const InputSpec &in : schedule_.inputs) {
    // Dim 0 holds the samples, `rows` rows each (a flattened [B*T, ...]
    // input has T); a row is every other dim.
    const int64_t rows = in.shape[0] / schedule_.globalBatch;
    const int64_t rowElements = numElements(Shape(in.shape.begin() + 1, in.shape.end()));
    Shape shape = in.shape;
    shape[0] = samples.size * rows;
    const int64_t first = (batch * in.shape[0] + samples.begin * rows) * rowElements;
    inputs.push_back(file_.readElements(in.name, first, shape).withDType(in.dtype));
  }
  return inputs;
}

} // namespace wsc::rt
