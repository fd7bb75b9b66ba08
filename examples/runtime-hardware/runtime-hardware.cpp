//===- runtime-hardware.cpp - lib/Runtime without MLIR ----------*- C++ -*-===//
//
// A launcher's first step: ask the runtime for the local GPUs and turn them
// into a hardware description for the partitioner. Machines without a GPU
// (or FTPipe built without CUDA) get the runtime's error, and the program
// falls back to GPUs described by hand, as a launcher planning for another
// machine would. Exits non-zero when the description is not usable.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Runtime/Devices.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace ftpipe;

int main() {
  std::vector<runtime::GpuProperties> gpus;
  llvm::Expected<std::vector<runtime::GpuProperties>> local =
      runtime::queryGpus();
  if (local) {
    gpus = std::move(*local);
  } else {
    llvm::outs() << "no local GPU (" << llvm::toString(local.takeError())
                 << "): describing two RTX 2080 Ti by hand\n";
  }
  if (gpus.empty()) {
    runtime::GpuProperties rtx2080ti;
    rtx2080ti.name = "RTX2080Ti";
    rtx2080ti.memoryBytes = 11ull << 30;
    rtx2080ti.multiProcessors = 68;
    rtx2080ti.clockKHz = 1545000;
    rtx2080ti.memoryClockKHz = 7000000;
    rtx2080ti.memoryBusWidthBits = 352;
    rtx2080ti.computeMajor = 7;
    rtx2080ti.computeMinor = 5;
    gpus.assign(2, rtx2080ti);
  }

  // Each GPU's datasheet peaks as a partitioner device, every pair joined by
  // a PCIe link (the CUDA runtime cannot tell link speeds).
  partition::HardwareSpec spec;
  spec.name = "this-machine";
  for (const runtime::GpuProperties &gpu : gpus)
    spec.devices.push_back(partition::sustainedDevice(
        gpu.name + ":" + std::to_string(spec.devices.size()), gpu.memoryBytes,
        runtime::peakFp32Tflops(gpu), runtime::peakMemoryGBps(gpu)));
  spec.intraNode = {/*GBps=*/12.0, /*latencyUs=*/20.0};
  llvm::Expected<partition::Hardware> hw =
      partition::Hardware::create(std::move(spec));
  if (!hw) {
    llvm::errs() << "runtime-hardware: " << llvm::toString(hw.takeError())
                 << "\n";
    return 1;
  }
  llvm::outs() << hw->name() << ": " << hw->numDevices() << " devices\n";
  for (const partition::Device &device : hw->devices()) {
    llvm::outs() << "  " << device.name << ": "
                 << llvm::format("%.2f", device.tflops) << " TFLOP/s, "
                 << llvm::format("%.1f", device.memGBps) << " GB/s\n";
    if (!(device.tflops > 0.0) || !(device.memGBps > 0.0)) {
      llvm::errs() << "runtime-hardware: " << device.name
                   << " has no speed\n";
      return 1;
    }
  }
  std::string nccl = runtime::ncclVersion();
  llvm::outs() << "NCCL: " << (nccl.empty() ? "none" : nccl) << "\n";
  return 0;
}
