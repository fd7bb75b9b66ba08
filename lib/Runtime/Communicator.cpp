//===- Communicator.cpp - Failure handling, barrier and all-reduce --------===//

#include "FTPipe/Runtime/Communicator.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

using namespace ftpipe::runtime;

static std::mutex handlerMutex;
static FailureHandler &handler() {
  static FailureHandler installed;
  return installed;
}

void ftpipe::runtime::setFailureHandler(FailureHandler newHandler) {
  std::lock_guard<std::mutex> lock(handlerMutex);
  handler() = std::move(newHandler);
}

void ftpipe::runtime::reportFailure(const std::string &message) {
  FailureHandler current;
  {
    std::lock_guard<std::mutex> lock(handlerMutex);
    current = handler();
  }
  if (current)
    current(message);
  std::fprintf(stderr, "ftpipe runtime: %s\n", message.c_str());
  std::fflush(stderr);
  std::exit(70);
}

void Communicator::barrier(int64_t generation) {
  char token = 0;
  int64_t arrive = tagOf(RuntimeTag::BarrierArrive),
          release = tagOf(RuntimeTag::BarrierRelease);
  if (device() == 0) {
    for (int64_t d = 1; d < devices(); ++d)
      recv(d, arrive, generation, &token, 1);
    for (int64_t d = 1; d < devices(); ++d)
      send(d, release, generation, &token, 1);
    return;
  }
  send(0, arrive, generation, &token, 1);
  recv(0, release, generation, &token, 1);
}

void Communicator::allReduceSum(const std::vector<int64_t> &group,
                                int64_t generation, float *values,
                                size_t count) {
  if (group.size() < 2)
    return;
  size_t bytes = count * sizeof(float);
  int64_t root = group.front();
  if (device() != root) {
    send(root, tagOf(RuntimeTag::AllReduceGather), generation, values, bytes);
    recv(root, tagOf(RuntimeTag::AllReduceResult), generation, values, bytes);
    return;
  }
  std::vector<float> incoming(count);
  for (size_t m = 1; m < group.size(); ++m) {
    recv(group[m], tagOf(RuntimeTag::AllReduceGather), generation,
         incoming.data(), bytes);
    for (size_t i = 0; i < count; ++i)
      values[i] += incoming[i];
  }
  for (size_t m = 1; m < group.size(); ++m)
    send(group[m], tagOf(RuntimeTag::AllReduceResult), generation, values,
         bytes);
}

int64_t Communicator::startAllReduceSum(const std::vector<int64_t> &group,
                                        int64_t generation, float *values,
                                        size_t count) {
  deferred.push_back({nextHandle, {group, generation, values, count}});
  return nextHandle++;
}

void Communicator::finishAllReduce(int64_t handle) {
  for (auto it = deferred.begin(); it != deferred.end(); ++it)
    if (it->first == handle) {
      DeferredAllReduce started = std::move(it->second);
      deferred.erase(it);
      allReduceSum(started.group, started.generation, started.values,
                   started.count);
      return;
    }
  reportFailure("device " + std::to_string(device()) +
                ": finishes an all-reduce it never started");
}
