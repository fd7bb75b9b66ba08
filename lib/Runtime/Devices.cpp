//===- Devices.cpp - The GPUs of this machine -------------------*- C++ -*-===//
//
// Peaks and hardware descriptions from GPU properties. The CUDA queries are
// in CudaDevices.cpp (built with CUDA) or NoCudaDevices.cpp (without).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Devices.h"

#include "llvm/Support/FormatVariadic.h"

using namespace ftpipe;
using namespace ftpipe::runtime;

unsigned ftpipe::runtime::fp32LanesPerMultiprocessor(int major, int minor) {
  if (major == 6 && minor == 0)
    return 64;
  if (major == 7)
    return 64;
  if (major == 8 && minor == 0)
    return 64;
  return 128;
}

double ftpipe::runtime::peakFp32Tflops(const GpuProperties &gpu) {
  return 2.0 * fp32LanesPerMultiprocessor(gpu.computeMajor, gpu.computeMinor) *
         gpu.multiProcessors * (gpu.clockKHz * 1e3) / 1e12;
}

double ftpipe::runtime::peakMemoryGBps(const GpuProperties &gpu) {
  return 2.0 * (gpu.memoryClockKHz * 1e3) * (gpu.memoryBusWidthBits / 8.0) /
         1e9;
}
