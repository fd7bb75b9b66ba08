//===- FailureDetector.cpp - TCP heartbeats and their watching thread -----===//
//
// Records on the connections are 32 bytes: kind, device, step, seconds. A
// heartbeat carries the sender's last completed step; a goodbye ends the
// sender's watch; a notice tells the survivors which device failed and why.
// The watching thread writes its message with write(2) and ends the process
// with _Exit: the main thread may be anywhere (in MPI, in stage code).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/FailureDetector.h"

#include "llvm/Support/FormatVariadic.h"

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace ftpipe::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {
enum RecordKind : int64_t {
  Heartbeat = 1,
  Goodbye = 2,
  NoticeSilent = 3,
  NoticeClosed = 4
};
struct Record {
  int64_t kind, device, step;
  double seconds;
};
static_assert(sizeof(Record) == 32, "records are 32 bytes on the wire");

/// Runtime tags of the address exchange (RuntimeTags.h).
constexpr int64_t kAddressTag = tagOf(RuntimeTag::FailureDetectorAddress);
constexpr int64_t kTableTag = tagOf(RuntimeTag::FailureDetectorTable);

struct Address {
  uint32_t ip = 0;
  uint16_t port = 0;
};

std::atomic<bool> terminated{false};
void onTerminate(int) { terminated = true; }
} // namespace

class FailureDetector::Impl {
public:
  Impl(int64_t self, int64_t devices, double timeout)
      : self(self), peers(devices), timeout(timeout),
        period(std::min(1.0, timeout / 4)) {}
  ~Impl() { stop(); }

  llvm::Error connect(Communicator &communicator);
  void run();
  void stop();

  int64_t self;
  struct Peer {
    int fd = -1;
    double lastSeen = 0;
    int64_t step = -1;
    bool done = false;
    std::vector<char> buffer;
  };
  std::vector<Peer> peers;
  double timeout, period;
  std::atomic<int64_t> completed{-1};
  std::atomic<bool> stopping{false};
  std::thread thread;

private:
  void send(Peer &peer, const Record &record);
  void broadcast(const Record &record);
  /// Reads what `peer` sent; false when its connection closed.
  bool receive(int64_t device);
  [[noreturn]] void failed(int64_t device, bool closed, double silence,
                           int64_t reporter);
  [[noreturn]] void terminatedBySignal();
};

static uint32_t hostAddress() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) {
    addrinfo hints = {}, *result = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (::getaddrinfo(host, nullptr, &hints, &result) == 0 && result) {
      uint32_t ip =
          reinterpret_cast<sockaddr_in *>(result->ai_addr)->sin_addr.s_addr;
      ::freeaddrinfo(result);
      return ip;
    }
  }
  return htonl(INADDR_LOOPBACK);
}

llvm::Error FailureDetector::Impl::connect(Communicator &communicator) {
  int64_t devices = peers.size();
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in local = {};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof(local);
  if (listener < 0 ||
      ::bind(listener, reinterpret_cast<sockaddr *>(&local), length) != 0 ||
      ::listen(listener, static_cast<int>(devices)) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr *>(&local), &length))
    return fail(llvm::Twine("failure detector: cannot listen: ") +
                std::strerror(errno));

  // Every process's address, gathered by device 0 and sent to all.
  std::vector<Address> table(devices);
  table[self] = {hostAddress(), ntohs(local.sin_port)};
  if (self == 0) {
    for (int64_t d = 1; d < devices; ++d)
      communicator.recv(d, kAddressTag, 0, &table[d], sizeof(Address));
    for (int64_t d = 1; d < devices; ++d)
      communicator.send(d, kTableTag, 0, table.data(),
                        table.size() * sizeof(Address));
  } else {
    communicator.send(0, kAddressTag, 0, &table[self], sizeof(Address));
    communicator.recv(0, kTableTag, 0, table.data(),
                      table.size() * sizeof(Address));
  }

  // Device j connects to every i < j and says who it is; i accepts.
  for (int64_t i = 0; i < self; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in remote = {};
    remote.sin_family = AF_INET;
    remote.sin_addr.s_addr = table[i].ip;
    remote.sin_port = htons(table[i].port);
    if (fd < 0 ||
        ::connect(fd, reinterpret_cast<sockaddr *>(&remote), sizeof(remote)) !=
            0 ||
        ::write(fd, &self, sizeof(self)) != sizeof(self))
      return fail("failure detector: cannot connect to device " +
                  llvm::Twine(i) + ": " + std::strerror(errno));
    peers[i].fd = fd;
  }
  double deadline = now() + timeout;
  for (int64_t accepted = 0; accepted < devices - 1 - self; ++accepted) {
    pollfd waiting = {listener, POLLIN, 0};
    int ready = ::poll(&waiting, 1,
                       static_cast<int>(std::max(0.0, deadline - now()) * 1e3));
    int fd = ready > 0 ? ::accept(listener, nullptr, nullptr) : -1;
    int64_t peer = -1;
    if (fd < 0 || ::read(fd, &peer, sizeof(peer)) != sizeof(peer) ||
        peer <= self || peer >= devices || peers[peer].fd >= 0)
      return fail("failure detector: a device did not connect within " +
                  llvm::formatv("{0:f1}", timeout) + " s");
    peers[peer].fd = fd;
  }
  ::close(listener);
  double start = now();
  for (Peer &peer : peers) {
    if (peer.fd < 0)
      continue;
    int on = 1;
    ::setsockopt(peer.fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    ::fcntl(peer.fd, F_SETFL, ::fcntl(peer.fd, F_GETFL) | O_NONBLOCK);
    peer.lastSeen = start;
  }
  return llvm::Error::success();
}

void FailureDetector::Impl::send(Peer &peer, const Record &record) {
  if (peer.fd >= 0 && !peer.done)
    // A full socket buffer drops a heartbeat; the next one follows.
    (void)::send(peer.fd, &record, sizeof(record), MSG_NOSIGNAL);
}

void FailureDetector::Impl::broadcast(const Record &record) {
  for (Peer &peer : peers)
    send(peer, record);
}

bool FailureDetector::Impl::receive(int64_t device) {
  Peer &peer = peers[device];
  char chunk[4096];
  while (true) {
    ssize_t got = ::recv(peer.fd, chunk, sizeof(chunk), 0);
    if (got > 0) {
      peer.buffer.insert(peer.buffer.end(), chunk, chunk + got);
      continue;
    }
    bool closed =
        got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    size_t whole = peer.buffer.size() / sizeof(Record) * sizeof(Record);
    for (size_t offset = 0; offset < whole; offset += sizeof(Record)) {
      Record record;
      std::memcpy(&record, peer.buffer.data() + offset, sizeof(Record));
      peer.lastSeen = now();
      switch (record.kind) {
      case Heartbeat:
        peer.step = record.step;
        break;
      case Goodbye:
        peer.done = true;
        break;
      case NoticeSilent:
      case NoticeClosed:
        if (record.device >= 0 &&
            record.device < static_cast<int64_t>(peers.size())) {
          peers[record.device].step =
              std::max(peers[record.device].step, record.step);
          failed(record.device, record.kind == NoticeClosed, record.seconds,
                 device);
        }
        break;
      }
    }
    peer.buffer.erase(peer.buffer.begin(), peer.buffer.begin() + whole);
    return !closed;
  }
}

static std::string stepText(int64_t step) {
  return step < 0 ? "none" : std::to_string(step);
}

void FailureDetector::Impl::failed(int64_t device, bool closed, double silence,
                                   int64_t reporter) {
  std::string message;
  std::string how =
      closed ? "died (its connection closed without a goodbye"
             : llvm::formatv("stopped answering (no heartbeat for {0:f1} s",
                             silence)
                   .str();
  if (device == self) {
    // Woken up after a stop, this process reads that the others gave up.
    message = llvm::formatv("ftpipe runtime: device {0} stops: device {1} "
                            "found that this device {2}); last step "
                            "completed: {3} (device {0})\n",
                            self, reporter, how, stepText(completed.load()));
  } else {
    broadcast({closed ? NoticeClosed : NoticeSilent, device, peers[device].step,
               silence});
    if (reporter != self)
      how += ", seen by device " + std::to_string(reporter);
    message = llvm::formatv(
        "ftpipe runtime: device {0} stops: device {1} {2}); last step "
        "completed: {4} (device {0}), {3} (device {1}'s last heartbeat)\n",
        self, device, how, stepText(peers[device].step),
        stepText(completed.load()));
  }
  (void)::write(STDERR_FILENO, message.data(), message.size());
  std::_Exit(70);
}

void FailureDetector::Impl::terminatedBySignal() {
  // mpirun sends SIGTERM about a second after a process died and SIGKILL
  // a second later: look briefly for the closed connection to name it.
  broadcast({Heartbeat, self, completed.load(), 0});
  double until = now() + 0.3;
  while (now() < until) {
    for (size_t d = 0; d < peers.size(); ++d)
      if (peers[d].fd >= 0 && !peers[d].done && !receive(d))
        failed(d, /*closed=*/true, 0, self);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string message = llvm::formatv(
      "ftpipe runtime: device {0} stops: terminated by a signal (mpirun ends "
      "the job when a process fails); last step completed: {1} (device {0})\n",
      self, stepText(completed.load()));
  (void)::write(STDERR_FILENO, message.data(), message.size());
  std::_Exit(70);
}

void FailureDetector::Impl::run() {
  double nextBeat = 0;
  int64_t sentStep = -1;
  std::vector<pollfd> fds;
  std::vector<int64_t> owners;
  while (!stopping) {
    // A heartbeat every period, and one as soon as a step completes.
    double current = now();
    int64_t step = completed.load();
    if (current >= nextBeat || step != sentStep) {
      broadcast({Heartbeat, self, step, 0});
      nextBeat = current + period;
      sentStep = step;
    }
    fds.clear();
    owners.clear();
    for (size_t d = 0; d < peers.size(); ++d)
      if (peers[d].fd >= 0 && !peers[d].done) {
        fds.push_back({peers[d].fd, POLLIN, 0});
        owners.push_back(d);
      }
    int wait = static_cast<int>(std::min(period, 0.05) * 1e3);
    if (::poll(fds.data(), fds.size(), wait) > 0)
      for (size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents && !receive(owners[i]) && !peers[owners[i]].done)
          failed(owners[i], /*closed=*/true, 0, self);
    if (stopping)
      break;
    if (terminated)
      terminatedBySignal();
    current = now();
    for (size_t d = 0; d < peers.size(); ++d)
      if (peers[d].fd >= 0 && !peers[d].done &&
          current - peers[d].lastSeen > timeout)
        failed(d, /*closed=*/false, current - peers[d].lastSeen, self);
  }
}

void FailureDetector::Impl::stop() {
  if (!thread.joinable())
    return;
  stopping = true;
  thread.join();
  // Nobody watches the flag any more: a SIGTERM ends the process again.
  ::signal(SIGTERM, SIG_DFL);
  broadcast({Goodbye, self, completed.load(), 0});
  for (Peer &peer : peers)
    if (peer.fd >= 0)
      ::close(peer.fd);
}

FailureDetector::FailureDetector(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}

FailureDetector::~FailureDetector() = default;

llvm::Expected<std::unique_ptr<FailureDetector>>
FailureDetector::start(Communicator &communicator, double timeoutSeconds) {
  if (!(timeoutSeconds > 0))
    return fail("the failure timeout must be positive");
  auto impl = std::make_unique<Impl>(communicator.device(),
                                     communicator.devices(), timeoutSeconds);
  if (llvm::Error error = impl->connect(communicator))
    return std::move(error);
  struct sigaction action = {};
  action.sa_handler = onTerminate;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  Impl *raw = impl.get();
  impl->thread = std::thread([raw] { raw->run(); });
  return std::unique_ptr<FailureDetector>(new FailureDetector(std::move(impl)));
}

void FailureDetector::setCompletedStep(int64_t step) { impl->completed = step; }

void FailureDetector::finish() { impl->stop(); }
