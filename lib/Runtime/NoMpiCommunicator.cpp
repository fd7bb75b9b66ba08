//===- NoMpiCommunicator.cpp - The MPI communicator's API without MPI -----===//

#include "FTPipe/Runtime/MpiCommunicator.h"

using namespace ftpipe::runtime;

bool ftpipe::runtime::haveMpi() { return false; }

llvm::Expected<std::unique_ptr<Communicator>>
ftpipe::runtime::createMpiCommunicator(int *, char ***) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "FTPipe was built without MPI (FTPIPE_ENABLE_MPI, docs/Runtime.md)");
}
