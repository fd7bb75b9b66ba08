//===- Transport.h - Where the stage ABI sends its tensors ------*- C++ -*-===//
//
// The seam between generated stage code and the runtime's communicators:
// `ftpipe_rt_send_*` / `ftpipe_rt_recv_*` (StageABI.h) pack the tensor into a
// contiguous buffer and hand it to the calling thread's Transport. The
// in-process mailbox below serves tests; the runtime's communicators
// (threads, MPI, NCCL) implement the same interface.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_TRANSPORT_H
#define FTPIPE_RUNTIME_TRANSPORT_H

#include "FTPipe/Runtime/MemoryLedger.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace ftpipe {
namespace runtime {

/// The bytes of a message a communicator holds (sent and not completed, or
/// arrived and not asked for), charged to the device's memory ledger.
using MessageBytes =
    std::vector<char, LedgerAllocator<char, FTPIPE_MEM_MESSAGES>>;

/// One device's end of the point-to-point transfers of stage code. Messages
/// are matched by (sender, receiver, tag, micro-batch).
class Transport {
public:
  virtual ~Transport();
  /// The device this end belongs to.
  virtual int64_t device() const = 0;
  /// Sends `bytes` bytes to `peer` (which may be device() itself).
  virtual void send(int64_t peer, int64_t tag, int64_t microbatch,
                    const void *data, size_t bytes) = 0;
  /// Receives the matching message into `data`, which holds `bytes` bytes.
  virtual void recv(int64_t peer, int64_t tag, int64_t microbatch, void *data,
                    size_t bytes) = 0;
};

class Communicator;

/// The calling thread's transport (null until set).
Transport *threadTransport();
void setThreadTransport(Transport *transport);

/// All devices of one process, the in-process communicator: a receive waits
/// (with the end's timeout, `timeoutSeconds` at first) until the message is
/// there. Any thread may serve any device through endpoint() (a
/// Communicator, Communicator.h).
class LocalMailbox {
public:
  explicit LocalMailbox(int64_t devices, double timeoutSeconds = 60);
  ~LocalMailbox();
  Communicator &endpoint(int64_t device);
  /// Messages sent and not yet received.
  size_t pending() const;

private:
  class Endpoint;
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  void put(Key key, const void *data, size_t bytes);
  void take(Key key, void *data, size_t bytes, const Endpoint &receiver);
  void checkDevice(int64_t device) const;

  std::vector<Endpoint *> endpoints;
  mutable std::mutex mutex;
  /// Notified on every new message and on abort.
  std::condition_variable arrived;
  std::map<Key, MessageBytes> messages;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_TRANSPORT_H
