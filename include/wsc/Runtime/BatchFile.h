//===- BatchFile.h - wsc-run's training and inference data files -*- C++ -*-===//
//
// A data file (wsc-run --data or --inputs) holds, per schedule input, a
// tensor of the input's shape (one batch, every step's) or, for training,
// S batches stacked [S, ...] (step i takes batch i mod S). Samples are
// contiguous in dim 0 of each input, so the samples of one group of systems
// are one block of bytes per input and batch: under MPI a rank reads those
// blocks alone, never the whole file (BatchFile::read).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_BATCHFILE_H
#define WSC_RUNTIME_BATCHFILE_H

#include "wsc/Runtime/Schedule.h"
#include "wsc/Support/SafeTensors.h"

#include <string>
#include <vector>

namespace wsc::rt {

/// The safetensors dtype a file must use for a runtime dtype: the storage
/// the runtime keeps it in (F32, I64, BOOL).
std::string fileDTypeFor(DType t);

class BatchFile {
public:
  /// Reads the file's header and checks that it holds every input of `s`
  /// with its dtype and shape (or [S, shape...] when `allowStacked`), the
  /// same S for every input. Errors name the file and the tensor.
  BatchFile(const Schedule &s, const std::string &path, bool allowStacked);

  int64_t batches() const { return batches_; }
  /// Samples [samples.begin, samples.begin + samples.size) of the global
  /// batch of batch `i` mod batches(), per schedule input: reads only their
  /// bytes.
  std::vector<Tensor> read(int64_t i, BatchShard samples);
  const SafeTensorsReader &file() const { return file_; }
  /// Bytes read from the file so far, its header included.
  uint64_t bytesRead() const { return file_.bytesRead(); }

private:
  const Schedule &schedule_;
  SafeTensorsReader file_;
  int64_t batches_ = 1;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_BATCHFILE_H
