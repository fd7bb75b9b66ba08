//===- CommunicatorMpiCheck.cpp - The communicator suite on MPI
//------------===//
//
// communicator-mpi-check ring|allreduce|empty|timeout|allreduce-timeout|size,
// started by mpirun: runs one of CommunicatorChecks.h on the MPI
// communicator. `ring`, `allreduce` and `empty` print "device D: ok" per
// process (or what differs, and exit 1); the others end with the
// communicator's failure (status 70) and its message.
//
//===----------------------------------------------------------------------===//

#include "CommunicatorChecks.h"

#include "FTPipe/Runtime/MpiCommunicator.h"

#include <cstdio>
#include <cstring>

using namespace ftpipe::runtime;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: communicator-mpi-check "
                         "ring|allreduce|empty|timeout|allreduce-timeout|"
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
