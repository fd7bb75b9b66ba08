//===- LocalMailbox.cpp - Transfers between devices of one process --------===//
//
// The thread's current Transport, and the in-process mailbox that tests and
// the reference tools use to run every device's stage code in one process.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Communicator.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace ftpipe::runtime;

Transport::~Transport() = default;

static thread_local Transport *currentTransport = nullptr;

Transport *ftpipe::runtime::threadTransport() { return currentTransport; }

void ftpipe::runtime::setThreadTransport(Transport *transport) {
  currentTransport = transport;
}

[[noreturn]] static void fail(const std::string &message) {
  reportFailure(message);
}

class LocalMailbox::Endpoint : public Communicator {
public:
  Endpoint(LocalMailbox &mailbox, int64_t self, double timeout)
      : mailbox(mailbox), self(self) {
    setTimeout(timeout);
  }
  int64_t device() const override { return self; }
  int64_t devices() const override { return mailbox.endpoints.size(); }
  void abort(const std::string &reason) override {
    std::lock_guard<std::mutex> lock(mailbox.mutex);
    if (abortReason.empty())
      abortReason = reason.empty() ? "aborted" : reason;
    mailbox.arrived.notify_all();
  }
  /// Set by abort(); guarded by the mailbox's mutex.
  std::string abortReason;
  void send(int64_t peer, int64_t tag, int64_t microbatch, const void *data,
            size_t bytes) override {
    mailbox.checkDevice(peer);
    mailbox.put({self, peer, tag, microbatch}, data, bytes);
  }
  void recv(int64_t peer, int64_t tag, int64_t microbatch, void *data,
            size_t bytes) override {
    mailbox.checkDevice(peer);
    mailbox.take({peer, self, tag, microbatch}, data, bytes, *this);
  }

private:
  LocalMailbox &mailbox;
  int64_t self;
};

LocalMailbox::LocalMailbox(int64_t devices, double timeoutSeconds) {
  for (int64_t d = 0; d < devices; ++d)
    endpoints.push_back(new Endpoint(*this, d, timeoutSeconds));
}

LocalMailbox::~LocalMailbox() {
  for (Endpoint *endpoint : endpoints)
    delete endpoint;
}

void LocalMailbox::checkDevice(int64_t device) const {
  if (device < 0 || device >= static_cast<int64_t>(endpoints.size()))
    fail("device " + std::to_string(device) + " is not one of the " +
         std::to_string(endpoints.size()) + " devices of the local mailbox");
}

Communicator &LocalMailbox::endpoint(int64_t device) {
  checkDevice(device);
  return *endpoints[device];
}

size_t LocalMailbox::pending() const {
  std::lock_guard<std::mutex> lock(mutex);
  return messages.size();
}

static std::string describe(int64_t from, int64_t to, int64_t tag,
                            int64_t microbatch) {
  return "tag " + std::to_string(tag) + " of micro-batch " +
         std::to_string(microbatch) + " from device " + std::to_string(from) +
         " to device " + std::to_string(to);
}

void LocalMailbox::put(Key key, const void *data, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = messages.try_emplace(key);
  if (!inserted)
    fail("message " +
         describe(std::get<0>(key), std::get<1>(key), std::get<2>(key),
                  std::get<3>(key)) +
         " sent twice");
  const char *bytesIn = static_cast<const char *>(data);
  it->second.assign(bytesIn, bytesIn + bytes);
  arrived.notify_all();
}

void LocalMailbox::take(Key key, void *data, size_t bytes,
                        const Endpoint &receiver) {
  std::unique_lock<std::mutex> lock(mutex);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(receiver.timeout());
  auto it = messages.find(key);
  while (it == messages.end()) {
    if (!receiver.abortReason.empty()) {
      std::string reason = receiver.abortReason;
      lock.unlock();
      fail("waiting for message " +
           describe(std::get<0>(key), std::get<1>(key), std::get<2>(key),
                    std::get<3>(key)) +
           ": " + reason);
    }
    bool timedOut =
        arrived.wait_until(lock, deadline) == std::cv_status::timeout;
    it = messages.find(key);
    if (timedOut && it == messages.end()) {
      lock.unlock();
      fail("no message " +
           describe(std::get<0>(key), std::get<1>(key), std::get<2>(key),
                    std::get<3>(key)) +
           " arrived (waited " + std::to_string(receiver.timeout()) + " s)");
    }
  }
  if (it->second.size() != bytes)
    fail("message " +
         describe(std::get<0>(key), std::get<1>(key), std::get<2>(key),
                  std::get<3>(key)) +
         " has " + std::to_string(it->second.size()) +
         " bytes, the receiver "
         "expects " +
         std::to_string(bytes));
  if (bytes) // an empty message may come with no buffer (nullptr)
    std::memcpy(data, it->second.data(), bytes);
  messages.erase(it);
}
