//===- FailureDetector.h - Heartbeats between processes ---------*- C++ -*-===//
//
// Detects a process of an MPI run that died (SIGKILL, a crash, an exit
// without finishing) or stopped answering (SIGSTOP, a hung host), and ends
// this process with a message naming the failed device and the last step
// completed, instead of letting it wait for a message that will not come.
//
// Every pair of processes holds a TCP connection (addresses exchanged once
// over the communicator) and a thread per process sends a heartbeat with its
// last completed step to every other process several times per timeout
// period. A peer whose connection closes without a goodbye has died (the
// kernel closes a killed process's sockets at once); a peer silent for the
// timeout has stopped. The thread then tells the other survivors (so they
// name the same device), prints `ftpipe runtime: device 1 stops: device 3
// stopped answering (no heartbeat for 10.0 s); last step completed: 7
// (device 1), 7 (device 3's last heartbeat)` and exits with status 70. A
// heartbeat also goes out as soon as a step completes. The thread needs no
// MPI and keeps beating while this process computes, so the timeout does not
// have to cover a long stage.
//
// A SIGTERM (mpirun ends the job when a process died) is caught the same
// way: the thread looks a moment longer for the failed peer, then prints
// what it knows and exits with status 70.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_FAILUREDETECTOR_H
#define FTPIPE_RUNTIME_FAILUREDETECTOR_H

#include "FTPipe/Runtime/Communicator.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace ftpipe {
namespace runtime {

class FailureDetector {
public:
  /// Connects this process to every other one of `communicator` (every
  /// process calls it at the same point) and starts watching. A peer
  /// silent for `timeoutSeconds` has failed.
  static llvm::Expected<std::unique_ptr<FailureDetector>>
  start(Communicator &communicator, double timeoutSeconds);
  /// Stops watching (as finish()).
  ~FailureDetector();

  /// The last step this process completed, sent with its heartbeats.
  void setCompletedStep(int64_t step);
  /// Says goodbye to the peers (their connection to this process may close
  /// now) and stops the thread. Call when the run ended for every process.
  void finish();

  class Impl;

private:
  explicit FailureDetector(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_FAILUREDETECTOR_H
