//===- CommunicatorChecks.h - One suite for every communicator ------------===//
//
// What every Communicator must do, written once against the interface: the
// in-process tests (CommunicatorTest.cpp) run it on threads, and
// communicator-mpi-check runs it on MPI processes (test/Runtime).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_UNITTESTS_RUNTIME_COMMUNICATORCHECKS_H
#define FTPIPE_UNITTESTS_RUNTIME_COMMUNICATORCHECKS_H

#include "FTPipe/Runtime/Communicator.h"

#include <cstring>
#include <numeric>
#include <vector>

namespace ftpipe {
namespace runtime {
namespace checks {

/// Around a ring, every device sends micro-batches 0, 1 and 2 to the next
/// (2 is 1000 floats), and one to itself; it receives them in the order 2,
/// 1, self, 0, with barriers before and after. Returns a digest of what
/// arrived.
inline int64_t ring(Communicator &self) {
  int64_t d = self.device(), n = self.devices();
  int64_t next = (d + 1) % n, previous = (d + n - 1) % n;
  self.barrier(0);
  for (int64_t mb : {0, 1}) {
    int64_t value = 10 * d + mb;
    self.send(next, 6, mb, &value, sizeof(value));
  }
  std::vector<float> big(1000);
  std::iota(big.begin(), big.end(), float(d));
  self.send(next, 6, 2, big.data(), big.size() * sizeof(float));
  int64_t mine = 7 * d;
  self.send(d, 8, 0, &mine, sizeof(mine));

  std::vector<float> bigIn(1000);
  self.recv(previous, 6, 2, bigIn.data(), bigIn.size() * sizeof(float));
  int64_t second = 0, first = 0, fromSelf = 0;
  self.recv(previous, 6, 1, &second, sizeof(second));
  self.recv(d, 8, 0, &fromSelf, sizeof(fromSelf));
  self.recv(previous, 6, 0, &first, sizeof(first));
  self.barrier(1);
  return second * 100 + first + 1000000 * fromSelf +
         10000 * static_cast<int64_t>(bigIn[999] - 999);
}

/// What ring() returns on device d of n.
inline int64_t expectedRing(int64_t d, int64_t n) {
  int64_t previous = (d + n - 1) % n;
  return (10 * previous + 1) * 100 + 10 * previous + 1000000 * 7 * d +
         10000 * previous;
}

/// All-reduces within the groups of devices of the same parity ({0, 2, ..}
/// and {1, 3, ..}, at once), three times: 1 value, 1000 and 300000. Values
/// that add exactly must give their exact sums; values that do not must
/// give every member the same bits (checked by sending them to the group's
/// first, which compares). Returns the number of values that differ.
inline int64_t allReduce(Communicator &self) {
  int64_t d = self.device(), n = self.devices();
  std::vector<int64_t> group;
  for (int64_t member = d % 2; member < n; member += 2)
    group.push_back(member);
  int64_t wrong = 0;
  int64_t generation = 0;
  for (size_t size : {size_t(1), size_t(1000), size_t(300000)}) {
    std::vector<float> exact(size), inexact(size);
    for (size_t i = 0; i < size; ++i) {
      exact[i] = float((d + 1) * (i % 7 + 1));
      inexact[i] = 0.1f * float(d + 1) + 1e-3f * float(i % 13);
    }
    self.allReduceSum(group, generation++, exact.data(), size);
    self.allReduceSum(group, generation++, inexact.data(), size);
    for (size_t i = 0; i < size; ++i) {
      float expected = 0;
      for (int64_t member : group)
        expected += float((member + 1) * (i % 7 + 1));
      wrong += exact[i] != expected;
    }
    if (d != group.front()) {
      self.send(group.front(), 11, generation, inexact.data(),
                size * sizeof(float));
      continue;
    }
    std::vector<float> theirs(size);
    for (int64_t member : group) {
      if (member == d)
        continue;
      self.recv(member, 11, generation, theirs.data(), size * sizeof(float));
      wrong +=
          std::memcmp(theirs.data(), inexact.data(), size * sizeof(float)) != 0;
    }
  }
  self.barrier(2);
  return wrong;
}

/// Device 1 waits in an all-reduce with device 0, which never joins it.
inline void allReduceAlone(Communicator &self) {
  if (self.device() != 1)
    return;
  std::vector<float> values(4, 1.0f);
  self.allReduceSum({0, 1}, 3, values.data(), values.size());
}

/// Device 1 waits for a message nobody sends (tag 7, micro-batch 5 from
/// device 0): its timeout must end the wait.
inline void waitForNothing(Communicator &self) {
  if (self.device() != 1)
    return;
  float value = 0;
  self.recv(0, 7, 5, &value, sizeof(value));
}

/// Empty messages without a buffer, as a replica whose device has no
/// gradients sends them (ReplicaCommunicator::startReduction): a send and
/// a receive of 0 bytes from nullptr around the ring, and an all-reduce of
/// 0 values at nullptr within all devices. memcpy with nullptr is undefined
/// even for 0 bytes, so this fails under UBSan (the sanitizer build) when a
/// communicator copies them; elsewhere it checks that nothing waits.
inline void emptyMessages(Communicator &self) {
  int64_t d = self.device(), n = self.devices();
  self.send((d + 1) % n, 13, 0, nullptr, 0);
  self.recv((d + n - 1) % n, 13, 0, nullptr, 0);
  std::vector<int64_t> all;
  for (int64_t member = 0; member < n; ++member)
    all.push_back(member);
  self.allReduceSum(all, 1, nullptr, 0);
  self.barrier(3);
}

/// Device 0 sends 8 bytes that device 1 receives as 4: refused.
inline void sizeMismatch(Communicator &self) {
  int64_t value = 1;
  if (self.device() == 0)
    self.send(1, 9, 0, &value, sizeof(value));
  if (self.device() == 1)
    self.recv(0, 9, 0, &value, 4);
}

} // namespace checks
} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_UNITTESTS_RUNTIME_COMMUNICATORCHECKS_H
