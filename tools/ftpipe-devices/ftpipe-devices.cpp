//===- ftpipe-devices.cpp - List this machine's GPUs ------------*- C++ -*-===//
//
// Prints the GPUs the CUDA runtime sees with their datasheet peaks, and with
// --json a cluster description that ftpipe-annotate-costs reads
// (`hardware=FILE`), so a plan can be made for the machine at hand.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Runtime/Devices.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace ftpipe;

static llvm::cl::opt<bool>
    emitJson("json", llvm::cl::desc("Print a cluster JSON for the GPUs"));
static llvm::cl::opt<double>
    linkGBps("link-gbps",
             llvm::cl::desc("GB/s between two GPUs (the CUDA runtime cannot "
                            "tell; default: PCIe 3.0 through the host)"),
             llvm::cl::init(12.0));
static llvm::cl::opt<double>
    linkLatencyUs("link-latency-us",
                  llvm::cl::desc("Latency between two GPUs in us"),
                  llvm::cl::init(20.0));
static llvm::cl::opt<bool>
    allowNone("allow-none", llvm::cl::desc("Exit with 0 when there is no GPU"));

/// A one-node cluster of `gpus`, each a sustainedDevice from its datasheet
/// peaks, with every pair joined by the link the options give (the CUDA
/// runtime cannot tell link speeds).
static llvm::Expected<partition::Hardware>
hardwareFromGpus(llvm::ArrayRef<runtime::GpuProperties> gpus) {
  partition::HardwareSpec spec;
  spec.name = "local";
  spec.dtype = "fp32";
  for (auto [index, gpu] : llvm::enumerate(gpus))
    spec.devices.push_back(partition::sustainedDevice(
        llvm::formatv("{0}:{1}", gpu.name, index).str(), gpu.memoryBytes,
        runtime::peakFp32Tflops(gpu), runtime::peakMemoryGBps(gpu)));
  spec.intraNode = {linkGBps, linkLatencyUs};
  return partition::Hardware::create(std::move(spec));
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "FTPipe: the GPUs of this machine\n");
  llvm::Expected<std::vector<runtime::GpuProperties>> gpus =
      runtime::queryGpus();
  if (!gpus) {
    llvm::errs() << "ftpipe-devices: " << llvm::toString(gpus.takeError())
                 << "\n";
    return allowNone ? 0 : 1;
  }
  if (emitJson) {
    llvm::Expected<partition::Hardware> hardware = hardwareFromGpus(*gpus);
    if (!hardware) {
      llvm::errs() << "ftpipe-devices: " << llvm::toString(hardware.takeError())
                   << "\n";
      return 1;
    }
    llvm::outs() << llvm::formatv("{0:2}\n",
                                  partition::hardwareToJSON(*hardware));
    return 0;
  }
  llvm::outs() << runtime::ncclVersion() << "\n";
  for (auto [index, gpu] : llvm::enumerate(*gpus))
    llvm::outs() << llvm::formatv(
        "device {0}: {1}, {2:f1} GiB, compute capability {3}.{4}, {5} SMs at "
        "{6} MHz: peak {7:f1} TFLOP/s FP32, {8:f0} GB/s\n",
        index, gpu.name, double(gpu.memoryBytes) / (1ull << 30),
        gpu.computeMajor, gpu.computeMinor, gpu.multiProcessors,
        gpu.clockKHz / 1000, runtime::peakFp32Tflops(gpu),
        runtime::peakMemoryGBps(gpu));
  return 0;
}
