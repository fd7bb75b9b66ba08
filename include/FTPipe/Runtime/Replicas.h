//===- Replicas.h - A replicated device's view of the run -------*- C++ -*-===//
//
// When a plan's devices run replicated (schedule::ReplicaLayout), each
// process runs one replica of one device. A ReplicaCommunicator is that
// process's end seen as the plan's device: device() and devices() are the
// plan's, and a stage transfer (a tag below kRuntimeTagBase) of micro-batch
// m to or from plan device d goes to or comes from d's replica m mod r_d,
// so stage code compiled for the plan runs unchanged. The runtime's own
// messages (checkpoint records, gathering the weights, the barrier) go to
// the peer's replica 0: only replicas 0 take part in them. Besides, the
// replicas of a device sum their gradients (startReduction and
// finishReduction, stage by stage: ReplicaReductions.h) and the
// tied-parameter exchange addresses replicas (sendTied, recvTied).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_REPLICAS_H
#define FTPIPE_RUNTIME_REPLICAS_H

#include "FTPipe/Runtime/Communicator.h"
#include "FTPipe/Runtime/Tensor.h"
#include "FTPipe/Schedule/Replicas.h"

#include <map>

namespace ftpipe {
namespace runtime {

class ReplicaCommunicator : public Communicator {
public:
  /// `processes`: the run's communicator, one end per process; its
  /// devices() must be layout.processes().
  ReplicaCommunicator(Communicator &processes, schedule::ReplicaLayout layout);

  int64_t device() const override { return planDevice; }
  int64_t devices() const override { return layout.devices(); }
  void abort(const std::string &reason) override { processes.abort(reason); }
  void send(int64_t peer, int64_t tag, int64_t microbatch, const void *data,
            size_t bytes) override;
  void recv(int64_t peer, int64_t tag, int64_t microbatch, void *data,
            size_t bytes) override;

  /// This process's replica of its device, and the device's replicas.
  int64_t replica() const { return replicaIndex; }
  int64_t replicas() const { return layout.replicas[planDevice]; }
  const schedule::ReplicaLayout &replicaLayout() const { return layout; }
  /// The run's communicator (one end per process).
  Communicator &perProcess() { return processes; }

  /// Starts summing `count` floats of update `step`'s gradients at
  /// `values` over this device's replicas (Communicator::startAllReduceSum
  /// on the device's processes); finishReduction waits for it
  /// (ReplicaReductions, stage by stage).
  int64_t startReduction(int64_t step, float *values, size_t count);
  void finishReduction(int64_t handle);
  /// The losses of step `step`'s micro-batches: the device's first replica
  /// gets every replica's (appended to its own), the others none, so the
  /// step's mean loss is reported once, over the whole step.
  void gatherLosses(int64_t step, std::vector<double> &losses);

  /// The tied-parameter exchange between this device and `peer`: this
  /// device's replica i sends to each replica j of `peer` with
  /// j mod r_self = i, and receives from `peer`'s replica i mod r_peer. So
  /// every replica of the receiving device gets the value once, whatever
  /// the two devices' replica counts.
  void sendTied(int64_t peer, int64_t tag, int64_t step, const void *data,
                size_t bytes);
  void recvTied(int64_t peer, int64_t tag, int64_t step, void *data,
                size_t bytes);

private:
  /// The process that serves a message of plan device `peer`.
  int64_t route(int64_t peer, int64_t tag, int64_t microbatch) const;

  Communicator &processes;
  schedule::ReplicaLayout layout;
  int64_t planDevice = 0, replicaIndex = 0;
};

/// The tied-parameter exchange's transfers of `self` (Executor.cpp): over
/// a ReplicaCommunicator, ReplicaCommunicator::sendTied and recvTied;
/// otherwise plain send and receive.
void sendTied(Communicator &self, int64_t peer, int64_t tag, int64_t step,
              const void *data, size_t bytes);
void recvTied(Communicator &self, int64_t peer, int64_t tag, int64_t step,
              void *data, size_t bytes);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_REPLICAS_H
