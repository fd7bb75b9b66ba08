//===- CpuRates.cpp - Measured rates of this machine's cores --------------===//

#include "FTPipe/Runtime/CpuRates.h"
#include "FTPipe/Support/ThreadCpuTime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cblas.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

using namespace ftpipe::runtime;
// Rates are timed in the calling thread's CPU time (OpenBLAS runs on the
// calling thread), so they hold on a loaded machine.
using ftpipe::support::threadCpuSeconds;

std::vector<GemmShape> ftpipe::runtime::gpt2GemmShapes() {
  // 512 tokens x 768 features: the fused q/k/v projection, the attention
  // output, the MLP up and down projections; per head 128 x 64 scores and
  // context; the LM head cut to 8192 of its 50257 outputs (a sixth of the
  // time, its rate within about 5 % of the whole head's).
  return {{512, 2304, 768}, {512, 768, 768}, {512, 3072, 768}, {512, 768, 3072},
          {128, 128, 64},   {128, 64, 128},  {512, 8192, 768}};
}

llvm::Expected<std::vector<GemmShape>>
ftpipe::runtime::parseGemmShapes(llvm::StringRef text) {
  std::vector<GemmShape> shapes;
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  for (llvm::StringRef item : items) {
    llvm::SmallVector<llvm::StringRef> dims;
    item.trim().split(dims, 'x');
    GemmShape shape;
    bool ok = dims.size() == 3;
    for (size_t i = 0; ok && i < 3; ++i)
      ok = !dims[i].getAsInteger(10, shape[i]) && shape[i] >= 1 &&
           shape[i] <= 65536;
    if (!ok)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "expected MxNxK, each from 1 to 65536, not '" + item + "'");
    shapes.push_back(shape);
  }
  return shapes;
}

llvm::Expected<CpuRates>
ftpipe::runtime::measureCpuRates(llvm::ArrayRef<GemmShape> shapes,
                                 double seconds, uint64_t copyBytes,
                                 int repetitions) {
  openblas_set_num_threads(1);
  CpuRates rates;
  cpu_set_t set;
  rates.cores = sched_getaffinity(0, sizeof(set), &set) == 0
                    ? CPU_COUNT(&set)
                    : sysconf(_SC_NPROCESSORS_ONLN);
  rates.memoryBytes =
      uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));

  double totalFlops = 0, totalSeconds = 0;
  for (const GemmShape &shape : shapes) {
    auto [m, n, k] = shape;
    std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n, 0.0f);
    auto call = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                  a.data(), k, b.data(), n, 0.0f, c.data(), n);
    };
    call(); // warm-up: pages, OpenBLAS's buffers
    // Repetitions of about seconds / repetitions each; the best one counts.
    double flops = 2.0 * m * n * k, best = 1e300;
    for (int r = 0; r < std::max(1, repetitions); ++r) {
      int64_t calls = 0;
      double start = threadCpuSeconds(), elapsed = 0;
      do {
        call();
        ++calls;
        elapsed = threadCpuSeconds() - start;
      } while (elapsed < seconds / std::max(1, repetitions));
      best = std::min(best, elapsed / calls);
    }
    rates.gemm.push_back({shape, flops / best / 1e9});
    totalFlops += flops;
    totalSeconds += best;
  }
  rates.gemmTflops = totalSeconds > 0 ? totalFlops / totalSeconds / 1e12 : 0;

  // Copy bandwidth: a buffer well beyond the caches, read and written.
  std::vector<char> from(copyBytes, 1), to(copyBytes, 0);
  double best = 1e300;
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    double start = threadCpuSeconds();
    std::memcpy(to.data(), from.data(), copyBytes);
    best = std::min(best, threadCpuSeconds() - start);
    std::swap(from, to);
  }
  rates.copyGBps = 2.0 * double(copyBytes) / best / 1e9;

  float one = 1, out = 0;
  double callBest = 1e300;
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    constexpr int kCalls = 10000;
    double start = threadCpuSeconds();
    for (int i = 0; i < kCalls; ++i)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f,
                  &one, 1, &one, 1, 0.0f, &out, 1);
    callBest = std::min(callBest, (threadCpuSeconds() - start) / kCalls);
  }
  rates.callUs = callBest * 1e6;
  return rates;
}
