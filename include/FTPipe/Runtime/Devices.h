//===- Devices.h - The GPUs of this machine ---------------------*- C++ -*-===//
//
// What the runtime knows about local GPUs: their properties from the CUDA
// runtime (when FTPipe is built with CUDA) and their datasheet peaks derived
// from those properties (ftpipe-devices turns them into a hardware
// description for the partitioner, so a plan can be made for the machine at
// hand). No MLIR here: the runtime links only LLVM Support and CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_DEVICES_H
#define FTPIPE_RUNTIME_DEVICES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

/// What the CUDA runtime reports about one GPU (cudaDeviceGetAttribute).
struct GpuProperties {
  std::string name;
  uint64_t memoryBytes = 0;
  int multiProcessors = 0;
  /// Peak SM clock, kHz.
  int clockKHz = 0;
  /// Peak memory clock, kHz, and bus width in bits.
  int memoryClockKHz = 0;
  int memoryBusWidthBits = 0;
  int computeMajor = 0, computeMinor = 0;
};

/// FP32 lanes per streaming multiprocessor by compute capability (NVIDIA's
/// CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table):
/// 64 for 6.0, 7.x and 8.0; 128 for 5.x, 6.1/6.2, 8.6, 8.7, 8.9, 9.0 and
/// newer.
unsigned fp32LanesPerMultiprocessor(int major, int minor);

/// Datasheet FP32 peak: 2 FLOPs (a fused multiply-add) x lanes x SMs x clock.
double peakFp32Tflops(const GpuProperties &gpu);

/// Datasheet memory bandwidth: 2 transfers per memory clock (DDR) x bus
/// width. Matches the datasheets of GDDR6 and HBM boards, whose reported
/// memory clock is half the data rate.
double peakMemoryGBps(const GpuProperties &gpu);

/// The GPUs the CUDA runtime sees. Fails with the CUDA error (e.g. "no CUDA
/// device: CUDA driver version is insufficient") when there are none, and
/// when FTPipe was built without CUDA.
llvm::Expected<std::vector<GpuProperties>> queryGpus();

/// "NCCL 2.28.9" for the NCCL FTPipe was built with, or an empty string
/// without CUDA.
std::string ncclVersion();

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_DEVICES_H
