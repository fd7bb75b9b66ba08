//===- CommunicatorMpiCheck.cpp - The communicator suite on MPI
//------------===//
//
// communicator-mpi-check
// ring|allreduce|empty|idle-wait|timeout|allreduce-timeout|size, started by
// mpirun: runs one of CommunicatorChecks.h on the MPI communicator. `ring`,
// `allreduce` and `empty` print "device D: ok" per process (or what differs,
// and exit 1); `idle-wait` prints the CPU milliseconds device 1 spends in a
// receive that waits one second for device 0; the others end with the
// communicator's failure (status 70) and its message.
//
//===----------------------------------------------------------------------===//

#include "CommunicatorChecks.h"

#include "FTPipe/Runtime/MpiCommunicator.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>

using namespace ftpipe::runtime;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: communicator-mpi-check "
                         "ring|allreduce|empty|idle-wait|timeout|"
                         "allreduce-timeout|"
                         "size\n");
    return 2;
  }
  std::string mode = argv[1];
  llvm::Expected<std::unique_ptr<Communicator>> communicator =
      createMpiCommunicator(&argc, &argv);
  if (!communicator) {
    std::fprintf(stderr, "%s\n",
                 llvm::toString(communicator.takeError()).c_str());
    return 1;
  }
  Communicator &self = **communicator;
  if (mode == "ring") {
    int64_t got = checks::ring(self);
    int64_t expected = checks::expectedRing(self.device(), self.devices());
    std::printf("device %lld: %s\n", static_cast<long long>(self.device()),
                got == expected ? "ok" : "wrong");
    return got == expected ? 0 : 1;
  }
  if (mode == "allreduce") {
    int64_t wrong = checks::allReduce(self);
    std::printf("device %lld: %s\n", static_cast<long long>(self.device()),
                wrong == 0 ? "ok" : "wrong");
    return wrong == 0 ? 0 : 1;
  }
  if (mode == "empty") {
    checks::emptyMessages(self);
    std::printf("device %lld: ok\n", static_cast<long long>(self.device()));
    return 0;
  }
  if (mode == "idle-wait") {
    // A pipeline bubble: the receiver polls while the sender computes.
    int32_t value = 1;
    if (self.device() == 0) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      self.send(1, 3, 0, &value, sizeof(value));
    } else if (self.device() == 1) {
      timespec start, end;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
      self.recv(0, 3, 0, &value, sizeof(value));
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
      double ms = (end.tv_sec - start.tv_sec) * 1e3 +
                  (end.tv_nsec - start.tv_nsec) * 1e-6;
      std::printf("device 1 waited 1 s using %.0f ms of CPU\n", ms);
    }
    self.barrier(0);
    return 0;
  }
  self.setTimeout(0.3);
  if (mode == "timeout")
    checks::waitForNothing(self);
  else if (mode == "allreduce-timeout")
    checks::allReduceAlone(self);
  else if (mode == "size")
    checks::sizeMismatch(self);
  self.barrier(0);
  return 0;
}
