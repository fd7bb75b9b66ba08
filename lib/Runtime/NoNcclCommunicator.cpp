//===- NoNcclCommunicator.cpp - The NCCL communicator's API without it ----===//

#include "FTPipe/Runtime/NcclCommunicator.h"

using namespace ftpipe::runtime;

bool ftpipe::runtime::haveNccl() { return false; }

llvm::Expected<std::unique_ptr<Communicator>>
ftpipe::runtime::createNcclCommunicator(int *, char ***, int) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "FTPipe was built without NCCL (it needs the CUDA toolkit, NCCL and "
      "MPI; docs/Runtime.md)");
}
