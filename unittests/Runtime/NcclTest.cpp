//===- NcclTest.cpp - The NCCL communicator is in the build ---------------===//
//
// There is no GPU on the development machine: this only checks that the NCCL
// communicator is built and linked exactly when CUDA, NCCL and MPI were
// found (the executable links ncclSend and friends through it).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/NcclCommunicator.h"

#include "gtest/gtest.h"

using namespace ftpipe::runtime;

TEST(Nccl, BuiltWhenCudaAndMpiAre) {
#if defined(FTPIPE_HAVE_CUDA) && defined(FTPIPE_HAVE_MPI)
  EXPECT_TRUE(haveNccl());
#else
  EXPECT_FALSE(haveNccl());
#endif
  auto factory = &createNcclCommunicator;
  EXPECT_NE(factory, nullptr);
}
