//===- allreduce_rate.cpp - The runtime's all-reduce among MPI processes --===//
//
// `mpirun -np P ftpipe-bench-allreduce [MiB [REPETITIONS]]`: times
// Communicator::allReduceSum (the replicas' gradient all-reduce, MPI
// communicator) of MiB (default 64) of floats among all P processes,
// REPETITIONS times (default 5) after one untimed call that makes the group's
// communicator, and prints from process 0 the median and best times and the
// link rate a description must give for schedule::ringAllReduceMs to price
// the median: 2 (P - 1) / P x bytes over it. That rate is the `--link-gbps`
// of `ftpipe-devices --cpu --json` (or the description's intra_node gbps)
// for the processes of this machine (docs/Replicas.md, "Pricing the CPU's
// all-reduce"). Wall time: print the load with it.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/MpiCommunicator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

using namespace ftpipe::runtime;

int main(int argc, char **argv) {
  llvm::Expected<std::unique_ptr<Communicator>> communicator =
      createMpiCommunicator(&argc, &argv);
  if (!communicator) {
    std::fprintf(stderr, "%s\n",
                 llvm::toString(communicator.takeError()).c_str());
    return 1;
  }
  double mib = argc > 1 ? std::atof(argv[1]) : 64.0;
  int repetitions = argc > 2 ? std::atoi(argv[2]) : 5;
  if (argc > 3 || !(mib > 0 && mib <= 4096) || repetitions < 1 ||
      repetitions > 1000) {
    std::fprintf(stderr, "usage: mpirun -np P ftpipe-bench-allreduce [MiB in "
                         "(0, 4096] [repetitions in 1..1000]]\n");
    return 2;
  }
  Communicator &self = **communicator;
  int64_t processes = self.devices();
  if (processes < 2) {
    std::fprintf(stderr, "ftpipe-bench-allreduce: start at least 2 processes "
                         "(mpirun -np P)\n");
    return 2;
  }
  self.setTimeout(600);
  std::vector<int64_t> group(processes);
  std::iota(group.begin(), group.end(), 0);
  size_t count = size_t(mib * (1 << 20)) / sizeof(float);
  std::vector<float> values(count, 1.0f);
  self.allReduceSum(group, 0, values.data(), values.size());
  std::vector<double> seconds;
  for (int i = 1; i <= repetitions; ++i) {
    auto start = std::chrono::steady_clock::now();
    self.allReduceSum(group, i, values.data(), values.size());
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  if (self.device() != 0)
    return 0;
  std::sort(seconds.begin(), seconds.end());
  double median = seconds[seconds.size() / 2];
  double bytes = double(count) * sizeof(float);
  double ringBytes = 2.0 * double(processes - 1) / double(processes) * bytes;
  std::printf("all-reduce of %.1f MiB among %lld processes: median %.1f ms, "
              "best %.1f ms (%d repetitions); ring link rate %.3f GB/s\n",
              bytes / (1 << 20), static_cast<long long>(processes),
              median * 1e3, seconds.front() * 1e3, repetitions,
              ringBytes / median / 1e9);
  return 0;
}
