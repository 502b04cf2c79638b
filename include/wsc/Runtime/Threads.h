//===- Threads.h - Thread count of the math libraries ------------*- C++ -*-===//
#ifndef WSC_RUNTIME_THREADS_H
#define WSC_RUNTIME_THREADS_H

namespace wsc::rt {

/// Sets the number of threads BLAS uses (OpenBLAS). Returns false if the
/// linked BLAS offers no way to set it.
bool setNumThreads(int n);
/// The BLAS thread count, or -1 if unknown.
int getNumThreads();

} // namespace wsc::rt

#endif // WSC_RUNTIME_THREADS_H
