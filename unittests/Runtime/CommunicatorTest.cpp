//===- CommunicatorTest.cpp - The communicator suite on threads
//------------===//
//
// CommunicatorChecks.h on the in-process communicator (one thread per
// device), and what only a test process can check: the failure handler.
// test/Runtime/communicator-mpi.test runs the same checks on MPI processes.
//
//===----------------------------------------------------------------------===//

#include "CommunicatorChecks.h"
#include "FTPipe/Runtime/StageABI.h"

#include "gtest/gtest.h"

#include <chrono>
#include <thread>

using namespace ftpipe::runtime;

namespace {

TEST(Communicator, RingOutOfOrderWithSelfSends) {
  for (int64_t devices : {2, 3, 4}) {
    LocalMailbox mailbox(devices);
    std::vector<int64_t> got(devices, -1);
    std::vector<std::thread> threads;
    for (int64_t d = 0; d < devices; ++d)
      threads.emplace_back(
          [&, d] { got[d] = checks::ring(mailbox.endpoint(d)); });
    for (std::thread &thread : threads)
      thread.join();
    for (int64_t d = 0; d < devices; ++d)
      EXPECT_EQ(got[d], checks::expectedRing(d, devices)) << d;
    EXPECT_EQ(mailbox.pending(), 0u);
  }
}

TEST(Communicator, AllReduceSumsWithinGroups) {
  for (int64_t devices : {1, 2, 4, 5}) {
    LocalMailbox mailbox(devices);
    std::vector<int64_t> wrong(devices, -1);
    std::vector<std::thread> threads;
    for (int64_t d = 0; d < devices; ++d)
      threads.emplace_back(
          [&, d] { wrong[d] = checks::allReduce(mailbox.endpoint(d)); });
    for (std::thread &thread : threads)
      thread.join();
    for (int64_t d = 0; d < devices; ++d)
      EXPECT_EQ(wrong[d], 0) << d << " of " << devices;
    EXPECT_EQ(mailbox.pending(), 0u);
  }
}

TEST(Communicator, EmptyMessagesWithoutBuffers) {
  for (int64_t devices : {1, 2, 3}) {
    LocalMailbox mailbox(devices);
    std::vector<std::thread> threads;
    for (int64_t d = 0; d < devices; ++d)
      threads.emplace_back(
          [&, d] { checks::emptyMessages(mailbox.endpoint(d)); });
    for (std::thread &thread : threads)
      thread.join();
    EXPECT_EQ(mailbox.pending(), 0u) << devices;
  }
}

TEST(Communicator, AllReduceTimesOut) {
  EXPECT_EXIT(
      {
        LocalMailbox mailbox(2, /*timeoutSeconds=*/0.2);
        checks::allReduceAlone(mailbox.endpoint(1));
      },
      testing::ExitedWithCode(70),
      "ftpipe runtime: no message tag 16777219 of micro-batch 3 from device "
      "0 to device 1 arrived");
}

TEST(Communicator, SizeMismatchIsRefused) {
  EXPECT_EXIT(
      {
        LocalMailbox mailbox(2);
        checks::sizeMismatch(mailbox.endpoint(0));
        checks::sizeMismatch(mailbox.endpoint(1));
      },
      testing::ExitedWithCode(70),
      "message tag 9 of micro-batch 0 from device 0 to device 1 has 8 bytes, "
      "the receiver expects 4");
}

TEST(Communicator, ReceiveTimesOutWithAMessage) {
  EXPECT_EXIT(
      {
        LocalMailbox mailbox(2, /*timeoutSeconds=*/0.05);
        checks::waitForNothing(mailbox.endpoint(1));
      },
      testing::ExitedWithCode(70),
      "no message tag 7 of micro-batch 5 from device 0 to device 1 arrived");
}

TEST(Communicator, AbortEndsAWait) {
  EXPECT_EXIT(
      {
        LocalMailbox mailbox(2, /*timeoutSeconds=*/60);
        std::thread aborter([&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          mailbox.endpoint(1).abort("device 0 failed");
        });
        checks::waitForNothing(mailbox.endpoint(1));
        aborter.join();
      },
      testing::ExitedWithCode(70), "device 0 failed");
}

TEST(Communicator, FailureHandlerSeesTheMessage) {
  EXPECT_EXIT(
      {
        setFailureHandler([](const std::string &message) {
          std::fprintf(stderr, "handled: %s\n", message.c_str());
          std::exit(3);
        });
        LocalMailbox mailbox(1, /*timeoutSeconds=*/0.01);
        char byte = 0;
        mailbox.endpoint(0).recv(0, 1, 0, &byte, 1);
      },
      testing::ExitedWithCode(3), "handled: no message tag 1");
}

/// ftpipe-trap-computed-indices' call: the gather's description comes as an
/// i8 memref (rank 1: head, size, stride) and ends the process, naming it
/// and the value.
TEST(StageABI, IndexErrorEndsTheRunNamingSiteAndValue) {
  const char site[] = "tosa.gather at loc(\"model.py\":7:3)";
  struct {
    FTPipeMemRefHead head;
    int64_t size, stride;
  } descriptor{{const_cast<char *>(site), const_cast<char *>(site), 0},
               sizeof(site),
               1};
  EXPECT_EXIT(ftpipe_rt_index_error(1, &descriptor, 600, 512),
              testing::ExitedWithCode(70),
              "tosa.gather at loc\\(\"model.py\":7:3\\): index 600 computed by "
              "the model is outside the 512 rows of its table; the run stops");
}

} // namespace
