//===- Threads.cpp - Thread count of the math libraries --------------------===//
//
// OpenBLAS's controls are declared weak so the runtime still links (and
// simply cannot set threads) against another BLAS.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Threads.h"

extern "C" {
void openblas_set_num_threads(int) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
}

namespace wsc::rt {

bool setNumThreads(int n) {
  if (n < 1 || !openblas_set_num_threads)
    return false;
  openblas_set_num_threads(n);
  return true;
}

int getNumThreads() { return openblas_get_num_threads ? openblas_get_num_threads() : -1; }

} // namespace wsc::rt
