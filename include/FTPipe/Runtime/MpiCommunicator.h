//===- MpiCommunicator.h - Devices as MPI processes -------------*- C++ -*-===//
//
// One device per MPI process (rank = device), in MPI_COMM_WORLD. A message
// carries its micro-batch in a small header, so receives match by
// (sender, tag, micro-batch) whatever the order the sender sent in; sends
// are non-blocking (the buffer is copied). Receives poll, so they honour the
// communicator's timeout and abort(). Without MPI in the build the factory
// says so. No MPI header here: users need none.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_MPICOMMUNICATOR_H
#define FTPIPE_RUNTIME_MPICOMMUNICATOR_H

#include "FTPipe/Runtime/Communicator.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace ftpipe {
namespace runtime {

/// Whether FTPipe was built with MPI.
bool haveMpi();

/// Initializes MPI (unless the program did) and returns this process's end.
/// Destroying it waits for its sends to be delivered (within the timeout)
/// and finalizes MPI if it initialized it.
llvm::Expected<std::unique_ptr<Communicator>>
createMpiCommunicator(int *argc, char ***argv);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_MPICOMMUNICATOR_H
