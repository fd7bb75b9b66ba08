//===- Replicas.cpp - Routing to replicas and their gradient sums ---------===//

#include "FTPipe/Runtime/Replicas.h"

using namespace ftpipe::runtime;

ReplicaCommunicator::ReplicaCommunicator(Communicator &processes,
                                         schedule::ReplicaLayout layout)
    : processes(processes), layout(std::move(layout)) {
  std::tie(planDevice, replicaIndex) =
      this->layout.replicaOf(processes.device());
  if (planDevice < 0 || processes.devices() != this->layout.processes())
    reportFailure("process " + std::to_string(processes.device()) + " of " +
                  std::to_string(processes.devices()) +
                  " has no place in the replicas " + this->layout.str());
  setTimeout(processes.timeout());
}

int64_t ReplicaCommunicator::route(int64_t peer, int64_t tag,
                                   int64_t microbatch) const {
  if (peer < 0 || peer >= layout.devices())
    reportFailure("device " + std::to_string(peer) + " is not one of the " +
                  std::to_string(layout.devices()) + " devices of the plan");
  int64_t replica = tag < kRuntimeTagBase && microbatch >= 0
                        ? layout.replicaFor(peer, microbatch)
                        : 0;
  return layout.process(peer, replica);
}

void ReplicaCommunicator::send(int64_t peer, int64_t tag, int64_t microbatch,
                               const void *data, size_t bytes) {
  processes.send(route(peer, tag, microbatch), tag, microbatch, data, bytes);
}

void ReplicaCommunicator::recv(int64_t peer, int64_t tag, int64_t microbatch,
                               void *data, size_t bytes) {
  processes.recv(route(peer, tag, microbatch), tag, microbatch, data, bytes);
}

int64_t ReplicaCommunicator::startReduction(int64_t step, float *values,
                                            size_t count) {
  return processes.startAllReduceSum(layout.group(planDevice), step, values,
                                     count);
}

void ReplicaCommunicator::finishReduction(int64_t handle) {
  processes.finishAllReduce(handle);
}

void ReplicaCommunicator::gatherLosses(int64_t step,
                                       std::vector<double> &losses) {
  if (replicas() < 2)
    return;
  int64_t first = layout.process(planDevice, 0);
  if (replicaIndex != 0) {
    int64_t count = static_cast<int64_t>(losses.size());
    processes.send(first, tagOf(RuntimeTag::ReplicaLossCount), step, &count,
                   sizeof(count));
    if (count)
      processes.send(first, tagOf(RuntimeTag::ReplicaLosses), step,
                     losses.data(), losses.size() * sizeof(double));
    losses.clear();
    return;
  }
  for (int64_t j = 1; j < replicas(); ++j) {
    int64_t from = layout.process(planDevice, j), count = 0;
    processes.recv(from, tagOf(RuntimeTag::ReplicaLossCount), step, &count,
                   sizeof(count));
    if (count <= 0)
      continue;
    std::vector<double> theirs(count);
    processes.recv(from, tagOf(RuntimeTag::ReplicaLosses), step, theirs.data(),
                   theirs.size() * sizeof(double));
    losses.insert(losses.end(), theirs.begin(), theirs.end());
  }
}

void ReplicaCommunicator::sendTied(int64_t peer, int64_t tag, int64_t step,
                                   const void *data, size_t bytes) {
  for (int64_t j = replicaIndex; j < layout.replicas[peer]; j += replicas())
    processes.send(layout.process(peer, j), tag, step, data, bytes);
}

void ReplicaCommunicator::recvTied(int64_t peer, int64_t tag, int64_t step,
                                   void *data, size_t bytes) {
  processes.recv(layout.process(peer, replicaIndex % layout.replicas[peer]),
                 tag, step, data, bytes);
}

void ftpipe::runtime::sendTied(Communicator &self, int64_t peer, int64_t tag,
                               int64_t step, const void *data, size_t bytes) {
  if (auto *replicated = dynamic_cast<ReplicaCommunicator *>(&self))
    replicated->sendTied(peer, tag, step, data, bytes);
  else
    self.send(peer, tag, step, data, bytes);
}

void ftpipe::runtime::recvTied(Communicator &self, int64_t peer, int64_t tag,
                               int64_t step, void *data, size_t bytes) {
  if (auto *replicated = dynamic_cast<ReplicaCommunicator *>(&self))
    replicated->recvTied(peer, tag, step, data, bytes);
  else
    self.recv(peer, tag, step, data, bytes);
}
