//===- CudaDevices.cpp - GPU queries through the CUDA runtime ---*- C++ -*-===//
//
// Built only with CUDA (FTPIPE_HAVE_CUDA). Uses the runtime API (cudart) and
// NCCL's version call; never the driver library directly, so the binary
// starts on machines without a GPU driver and reports that instead.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Devices.h"

#include "llvm/Support/FormatVariadic.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

using namespace ftpipe;
using namespace ftpipe::runtime;

static llvm::Error cudaFailure(llvm::StringRef what, cudaError_t status) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 llvm::formatv("{0}: {1} ({2})", what,
                                               cudaGetErrorString(status),
                                               cudaGetErrorName(status)));
}

llvm::Expected<std::vector<GpuProperties>> ftpipe::runtime::queryGpus() {
  int count = 0;
  if (cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess)
    return cudaFailure("no CUDA device", status);
  if (count == 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no CUDA device: the runtime sees none");
  std::vector<GpuProperties> gpus;
  for (int device = 0; device < count; ++device) {
    cudaDeviceProp properties;
    if (cudaError_t status = cudaGetDeviceProperties(&properties, device);
        status != cudaSuccess)
      return cudaFailure(llvm::formatv("device {0}", device).str(), status);
    GpuProperties gpu;
    gpu.name = properties.name;
    gpu.memoryBytes = properties.totalGlobalMem;
    gpu.multiProcessors = properties.multiProcessorCount;
    gpu.memoryBusWidthBits = properties.memoryBusWidth;
    gpu.computeMajor = properties.major;
    gpu.computeMinor = properties.minor;
    // Clocks are attributes only (no longer fields of cudaDeviceProp).
    if (cudaError_t status =
            cudaDeviceGetAttribute(&gpu.clockKHz, cudaDevAttrClockRate, device);
        status != cudaSuccess)
      return cudaFailure("clock rate", status);
    if (cudaError_t status = cudaDeviceGetAttribute(
            &gpu.memoryClockKHz, cudaDevAttrMemoryClockRate, device);
        status != cudaSuccess)
      return cudaFailure("memory clock rate", status);
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::string ftpipe::runtime::ncclVersion() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess)
    return "NCCL (version unknown)";
  // NCCL >= 2.9 encodes major * 10000 + minor * 100 + patch.
  return llvm::formatv("NCCL {0}.{1}.{2}", version / 10000,
                       (version / 100) % 100, version % 100)
      .str();
}
