//===- CpuRates.h - Measured rates of this machine's cores ------*- C++ -*-===//
//
// What `ftpipe-devices --cpu` measures to describe the CPU as the cost model
// sees a device (docs/CostModel.md): the sustained single-thread rate of
// OpenBLAS's sgemm at the shapes the stages use (the runtime runs one BLAS
// thread per process), the bandwidth of one thread copying a buffer much
// larger than the caches, and the time of one minimal BLAS call (the
// roofline's per-kernel overhead). Times are the measuring thread's CPU
// time, which leaves out the time it waits for a core, and each figure is
// the best of several repetitions, so that other work on the machine lowers
// it as little as it can (it still shares caches and memory bandwidth: print
// the load with the figures).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_CPURATES_H
#define FTPIPE_RUNTIME_CPURATES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

/// C[m][n] = A[m][k] B[k][n] in f32.
using GemmShape = std::array<int64_t, 3>;

/// The matrix products of GPT-2 124M's stages at micro-batch 4 x 128 tokens
/// (n_embd 768, 12 heads): attention and MLP projections, the per-head
/// score and context products, and the LM head.
std::vector<GemmShape> gpt2GemmShapes();

/// Parses "MxNxK,MxNxK,..." (each at least 1, at most 65536).
llvm::Expected<std::vector<GemmShape>> parseGemmShapes(llvm::StringRef text);

struct GemmRate {
  GemmShape shape;
  double gflops = 0;
};

struct CpuRates {
  /// Per shape its best rate; and the rate over all of them (total FLOPs
  /// over total time at each one's best rate), in TFLOP/s.
  std::vector<GemmRate> gemm;
  double gemmTflops = 0;
  /// One thread copying (bytes read + bytes written per second), GB/s.
  double copyGBps = 0;
  /// One 1x1x1 sgemm call, microseconds.
  double callUs = 0;
  /// Cores the process may run on, and the machine's memory.
  int64_t cores = 0;
  uint64_t memoryBytes = 0;
};

/// Measures on the calling thread (OpenBLAS set to one thread): every shape
/// for about `seconds` of CPU time each (at least one call a repetition), the
/// copy of `copyBytes` (at least 4x the caches) `repetitions` times.
llvm::Expected<CpuRates> measureCpuRates(llvm::ArrayRef<GemmShape> shapes,
                                         double seconds, uint64_t copyBytes,
                                         int repetitions);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_CPURATES_H
