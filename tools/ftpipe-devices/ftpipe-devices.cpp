//===- ftpipe-devices.cpp - This machine's GPUs or CPU cores ----*- C++ -*-===//
//
// Prints the GPUs the CUDA runtime sees with their datasheet peaks, and with
// --json a cluster description that ftpipe-annotate-costs reads
// (`hardware=FILE`), so a plan can be made for the machine at hand. With
// --cpu it measures the CPU instead (CpuRates.h: sgemm at the stages' shapes,
// copy bandwidth, call overhead; one device per process, each a core) and
// describes that, for `ftpipe-compile --target=cpu --hardware=FILE`.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Runtime/CpuRates.h"
#include "FTPipe/Runtime/Devices.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
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

static llvm::cl::opt<bool>
    cpu("cpu", llvm::cl::desc("Measure and describe this machine's CPU cores "
                              "instead of its GPUs"));
static llvm::cl::opt<unsigned>
    cpuDevices("devices",
               llvm::cl::desc("--cpu: devices (processes, one core each) "
                              "to describe (default: the cores)"));
static llvm::cl::opt<std::string> gemmShapes(
    "gemm-shapes",
    llvm::cl::desc("--cpu: sgemm shapes MxNxK,... (default: GPT-2 124M's at "
                   "micro-batch 4 x 128)"));
static llvm::cl::opt<double>
    seconds("seconds", llvm::cl::desc("--cpu: CPU seconds of sgemm per shape"),
            llvm::cl::init(0.2));
static llvm::cl::opt<unsigned>
    copyMiB("copy-mib", llvm::cl::desc("--cpu: MiB copied to time bandwidth"),
            llvm::cl::init(256));
static llvm::cl::opt<unsigned>
    repetitions("repetitions",
                llvm::cl::desc("--cpu: repetitions, the best counts"),
                llvm::cl::init(3));

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

#ifdef FTPIPE_HAVE_CPU_RATES
/// A one-node cluster of `devices` processes on this CPU, each a core with
/// the measured `rates` as its sustained figures (no efficiency applied:
/// they are measured) and an equal share of the memory; a message between
/// two is copied into shared memory and out (half the copy bandwidth)
/// unless --link-gbps says otherwise; with more devices than cores, the
/// node's `node_cores` is the cores.
static llvm::Expected<partition::Hardware>
hardwareFromCpu(const runtime::CpuRates &rates, unsigned devices) {
  partition::HardwareSpec spec;
  spec.name = "local-cpu";
  spec.dtype = "fp32";
  for (unsigned d = 0; d < devices; ++d) {
    partition::Device device;
    device.name = llvm::formatv("cpu:{0}", d).str();
    device.memoryBytes = rates.memoryBytes / devices;
    device.tflops = rates.gemmTflops;
    device.memGBps = rates.copyGBps;
    device.launchUs = rates.callUs;
    spec.devices.push_back(device);
  }
  spec.intraNode = {linkGBps.getNumOccurrences() ? linkGBps
                                                 : rates.copyGBps / 2,
                    linkLatencyUs};
  // More processes than cores share them.
  if (rates.cores > 0 && int64_t(devices) > rates.cores)
    spec.nodeCores = {uint32_t(rates.cores)};
  return partition::Hardware::create(std::move(spec));
}

/// --cpu: measures, prints the figures (with the machine's load, on stderr
/// when the JSON goes to stdout) and the description.
static int describeCpu() {
  std::vector<runtime::GemmShape> shapes = runtime::gpt2GemmShapes();
  if (!gemmShapes.empty()) {
    llvm::Expected<std::vector<runtime::GemmShape>> parsed =
        runtime::parseGemmShapes(gemmShapes);
    if (!parsed) {
      llvm::errs() << "ftpipe-devices: --gemm-shapes: "
                   << llvm::toString(parsed.takeError()) << "\n";
      return 1;
    }
    shapes = std::move(*parsed);
  }
  if (!(seconds > 0 && seconds <= 600) || copyMiB < 1 || copyMiB > 65536 ||
      repetitions < 1 || repetitions > 1000) {
    llvm::errs() << "ftpipe-devices: --seconds must be in (0, 600], "
                    "--copy-mib in [1, 65536], --repetitions in [1, 1000]\n";
    return 1;
  }
  llvm::Expected<runtime::CpuRates> rates = runtime::measureCpuRates(
      shapes, seconds, uint64_t(copyMiB) << 20, repetitions);
  if (!rates) {
    llvm::errs() << "ftpipe-devices: " << llvm::toString(rates.takeError())
                 << "\n";
    return 1;
  }
  llvm::raw_ostream &os = emitJson ? llvm::errs() : llvm::outs();
  auto load = llvm::MemoryBuffer::getFileAsStream("/proc/loadavg");
  os << "load average: "
     << (load ? (*load)->getBuffer().trim() : llvm::StringRef("unknown"))
     << "\n";
  for (const runtime::GemmRate &gemm : rates->gemm)
    os << llvm::formatv("sgemm {0}x{1}x{2}: {3:f1} GFLOP/s (one thread)\n",
                        gemm.shape[0], gemm.shape[1], gemm.shape[2],
                        gemm.gflops);
  os << llvm::formatv("sgemm over the shapes: {0:f4} TFLOP/s; copy {1:f1} "
                      "GB/s (read + write, one thread); call {2:f2} us; {3} "
                      "cores, {4:f1} GiB\n",
                      rates->gemmTflops, rates->copyGBps, rates->callUs,
                      rates->cores, double(rates->memoryBytes) / (1ull << 30));
  if (!emitJson)
    return 0;
  unsigned devices = cpuDevices ? unsigned(cpuDevices) : unsigned(rates->cores);
  llvm::Expected<partition::Hardware> hardware =
      hardwareFromCpu(*rates, std::max(1u, devices));
  if (!hardware) {
    llvm::errs() << "ftpipe-devices: " << llvm::toString(hardware.takeError())
                 << "\n";
    return 1;
  }
  llvm::outs() << llvm::formatv("{0:2}\n",
                                partition::hardwareToJSON(*hardware));
  return 0;
}
#else
static int describeCpu() {
  llvm::errs() << "ftpipe-devices: --cpu measures with OpenBLAS, which this "
                  "build lacks\n";
  return 1;
}
#endif

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "FTPipe: the GPUs of this machine\n");
  if (cpu)
    return describeCpu();
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
