//===- NoCudaDevices.cpp - GPU queries in a build without CUDA --*- C++ -*-===//
//
// Built when FTPipe is configured without CUDA: says so instead of pretending
// there are no GPUs.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Devices.h"

using namespace ftpipe;
using namespace ftpipe::runtime;

llvm::Expected<std::vector<GpuProperties>> ftpipe::runtime::queryGpus() {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "no CUDA device: FTPipe was built without CUDA (FTPIPE_ENABLE_CUDA)");
}

std::string ftpipe::runtime::ncclVersion() { return ""; }
