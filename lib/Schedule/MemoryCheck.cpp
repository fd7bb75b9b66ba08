//===- MemoryCheck.cpp - Whether a plan's devices fit in memory -----------===//
//
// The replay of each device's busiest replica, the all-reduce's buffer of a
// replicated one, and the message naming the first device over its budget.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/MemoryCheck.h"
#include "FTPipe/Schedule/MemoryReplay.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace ftpipe::schedule;

/// "11.81 GiB", or "2080372 bytes" below a hundredth of a GiB.
static std::string describeBytes(uint64_t bytes) {
  constexpr double kGiB = double(1ull << 30);
  if (double(bytes) < kGiB / 100)
    return llvm::formatv("{0} bytes", bytes).str();
  return llvm::formatv("{0:F2} GiB", double(bytes) / kGiB).str();
}

/// "device D needs X bytes of its Y bytes (parts ...)", for a device run as
/// `replicas` replicas with `inputs`.
static std::string describeNeed(size_t device, const DeviceNeed &need,
                                const DeviceMemoryInputs &inputs,
                                int64_t replicas) {
  const DeviceMemory &m = need.memory;
  std::string message = llvm::formatv(
      "device {0} needs {1} bytes of its {2} bytes (weights {3}, gradients "
      "{4}, optimizer state {5}, stashed versions {6}, activations {7}, "
      "reserved {8}",
      device, need.bytes, m.budgetBytes, describeBytes(m.weightBytes),
      describeBytes(m.gradientBytes), describeBytes(m.optimizerBytes),
      describeBytes(m.stashBytes), describeBytes(m.activationBytes),
      describeBytes(m.reservedBytes));
  if (need.allReduceBytes)
    message += llvm::formatv(
        "; {0} while its replicas' all-reduce buffer of {1} is held",
        describeBytes(reducingBytes(m, inputs, replicas)),
        describeBytes(need.allReduceBytes));
  if (need.countedBytes > replicatedBytes(m, inputs, replicas))
    message += llvm::formatv("; {0} by the plan's count",
                             describeBytes(need.countedBytes));
  return message + ")";
}

MemoryCheck ftpipe::schedule::checkMemory(
    const StageGraph &graph, llvm::ArrayRef<DeviceMemoryInputs> inputs,
    const TrainingSetup &setup, const ReplicaLayout &layout,
    llvm::ArrayRef<uint64_t> counted) {
  MemoryCheck check;
  std::vector<DeviceMemory> replayed =
      replayedMemory(graph, inputs, setup, layout.replicas);
  for (auto [d, memory] : llvm::enumerate(replayed)) {
    int64_t replicas = d < layout.replicas.size() ? layout.replicas[d] : 1;
    DeviceNeed need;
    need.memory = memory;
    need.allReduceBytes = allReduceBufferBytes(inputs[d], replicas);
    need.countedBytes = d < counted.size() ? counted[d] : 0;
    need.bytes = std::max(need.countedBytes,
                          replicatedBytes(memory, inputs[d], replicas));
    if (!need.fits() && check.failure.empty())
      check.failure =
          (layout.replicated()
               ? "does not fit in memory as replicas " + layout.str() + ": "
               : std::string("does not fit in memory: ")) +
          describeNeed(d, need, inputs[d], replicas);
    check.devices.push_back(std::move(need));
  }
  return check;
}
