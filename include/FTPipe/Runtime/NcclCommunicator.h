//===- NcclCommunicator.h - Devices as GPUs talking over NCCL ---*- C++ -*-===//
//
// One GPU per MPI process, bootstrapped over MPI so it spans nodes. Stage
// transfers (tags below kRuntimeTagBase) carry device memory over NCCL: one
// two-rank NCCL communicator and CUDA stream per ordered pair of devices, so
// a send never waits behind a receive; a small header (tag, micro-batch,
// bytes) travels over MPI, and a receive that meets another message first
// keeps it in a device buffer until asked for. Sends copy the buffer on the
// stream and return at once; receives poll the stream, so the timeout and
// abort() hold (abort also aborts the NCCL communicators). The runtime's own
// messages (tied-gradient exchange, barrier: host memory) go over MPI. The
// replicas' all-reduce (allReduceSum) runs ncclAllReduce on a communicator
// of the group's GPUs, made at the group's first all-reduce.
//
// Built when FTPipe finds the CUDA toolkit, NCCL and MPI; without, the
// factory says so. It has not run here (no GPU on the development machine).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_NCCLCOMMUNICATOR_H
#define FTPIPE_RUNTIME_NCCLCOMMUNICATOR_H

#include "FTPipe/Runtime/Communicator.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace ftpipe {
namespace runtime {

/// Whether FTPipe was built with NCCL (and MPI to bootstrap it).
bool haveNccl();

/// Initializes MPI (unless the program did), selects GPU `gpu` (-1: the
/// process's local rank modulo the GPUs of the node) and connects every pair
/// of processes over NCCL.
llvm::Expected<std::unique_ptr<Communicator>>
createNcclCommunicator(int *argc, char ***argv, int gpu = -1);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_NCCLCOMMUNICATOR_H
