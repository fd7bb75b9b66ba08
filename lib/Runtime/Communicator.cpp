//===- Communicator.cpp - Failure handling and the barrier ----------------===//

#include "FTPipe/Runtime/Communicator.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

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
