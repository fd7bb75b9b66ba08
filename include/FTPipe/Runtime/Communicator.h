//===- Communicator.h - Devices talking to each other -----------*- C++ -*-===//
//
// A Communicator is one device's end of the run's point-to-point transfers:
// the Transport that generated stage code sends through, plus what the
// runtime itself needs (the number of devices, the tied-gradient exchange,
// a barrier) and what failure detection needs: every wait ends after a
// timeout, and abort() ends every wait of this end at once. A wait that ends
// so calls the process's failure handler, which does not return (by default
// it prints the message and exits with status 70).
//
// Implementations: in-process (threads; LocalMailbox), MPI (processes; in
// MpiCommunicator.h, when FTPipe is built with MPI), NCCL (GPUs, bootstrapped
// over MPI; NcclCommunicator.h, when built with CUDA and MPI).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_COMMUNICATOR_H
#define FTPIPE_RUNTIME_COMMUNICATOR_H

#include "FTPipe/Runtime/RuntimeTags.h"
#include "FTPipe/Runtime/Transport.h"

#include <functional>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

/// Called with a message when a wait timed out or was aborted; must not
/// return (the runtime exits with status 70 if it does).
using FailureHandler = std::function<void(const std::string &message)>;
/// Installs `handler` for the process (null restores the default).
void setFailureHandler(FailureHandler handler);
/// Reports a failure through the handler and ends the process.
[[noreturn]] void reportFailure(const std::string &message);

class Communicator : public Transport {
public:
  /// Devices in the run; device() is this end's.
  virtual int64_t devices() const = 0;
  /// Ends every current and future wait of this end with `reason`.
  virtual void abort(const std::string &reason) = 0;
  /// How long one wait may take before it fails.
  void setTimeout(double seconds) { timeoutSeconds = seconds; }
  double timeout() const { return timeoutSeconds; }
  /// Every device waits until all devices arrived (over send/recv).
  void barrier(int64_t generation);
  /// Sums the `count` floats at `values` elementwise over the devices of
  /// `group` (ascending, this end's device among them) in place: every
  /// member ends with the same sum, bit for bit. Every member calls it with
  /// the same group, `generation` and count; its waits end as a receive's
  /// do (timeout, abort). By default over send/recv: the group's first
  /// device adds the others' values in group order and sends the sum back.
  /// (No LLVM types here: the stage ABI library includes this header.)
  virtual void allReduceSum(const std::vector<int64_t> &group,
                            int64_t generation, float *values, size_t count);
  /// allReduceSum in two halves, so that work goes on while it runs: starts
  /// it and returns its handle; finishAllReduce(handle) waits until it is
  /// done. `values` must stay put and untouched in between. Several may be
  /// in flight; every member starts and finishes the group's in the same
  /// order. By default the whole sum runs in finishAllReduce; MPI starts it
  /// (MPI_Iallreduce) at once.
  virtual int64_t startAllReduceSum(const std::vector<int64_t> &group,
                                    int64_t generation, float *values,
                                    size_t count);
  virtual void finishAllReduce(int64_t handle);

protected:
  double timeoutSeconds = 60;

private:
  /// Started all-reduces that finishAllReduce runs (the default).
  struct DeferredAllReduce {
    std::vector<int64_t> group;
    int64_t generation = 0;
    float *values = nullptr;
    size_t count = 0;
  };
  std::vector<std::pair<int64_t, DeferredAllReduce>> deferred;
  int64_t nextHandle = 0;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_COMMUNICATOR_H
