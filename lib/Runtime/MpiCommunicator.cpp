//===- MpiCommunicator.cpp - Point-to-point transfers over MPI ------------===//
//
// Every message is [int64 micro-batch][payload] sent with MPI tag = the
// transfer's tag. A receive first looks among the messages that arrived
// early (same sender and tag, another micro-batch), then polls MPI_Iprobe
// until its message arrives, the timeout passes or abort() is called.
// MPI is called only from the thread that created the communicator.
// allReduceSum runs MPI_Iallreduce on a communicator of the group's
// processes (made at the group's first all-reduce), polled the same way;
// startAllReduceSum starts it and finishAllReduce polls it, so several may
// be in flight (the replicas' stage-by-stage gradient sums).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/MpiCommunicator.h"

// The C API only (OpenMPI's mpi.h would pull in its C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

using namespace ftpipe::runtime;

bool ftpipe::runtime::haveMpi() { return true; }

namespace {
class MpiCommunicator : public Communicator {
public:
  MpiCommunicator(bool ownsMpi) : ownsMpi(ownsMpi) {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    self = rank;
    count = size;
  }

  ~MpiCommunicator() override {
    auto deadline = clock::now() + std::chrono::duration<double>(timeout());
    while (!sends.empty() && clock::now() < deadline) {
      progressSends();
      std::this_thread::yield();
    }
    for (Pending &pending : sends)
      MPI_Request_free(&pending.request);
    for (auto &entry : groups)
      MPI_Comm_free(&entry.second);
    if (ownsMpi) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized)
        MPI_Finalize();
    }
  }

  int64_t device() const override { return self; }
  int64_t devices() const override { return count; }

  void abort(const std::string &reason) override {
    std::lock_guard<std::mutex> lock(abortMutex);
    if (abortReason.empty())
      abortReason = reason.empty() ? "aborted" : reason;
    aborted = true;
  }

  void send(int64_t peer, int64_t tag, int64_t microbatch, const void *data,
            size_t bytes) override {
    checkPeer(peer);
    checkTag(tag);
    sends.emplace_back();
    Pending &pending = sends.back();
    pending.buffer.resize(sizeof(int64_t) + bytes);
    std::memcpy(pending.buffer.data(), &microbatch, sizeof(int64_t));
    if (bytes) // an empty message may come with no buffer (nullptr)
      std::memcpy(pending.buffer.data() + sizeof(int64_t), data, bytes);
    MPI_Isend(pending.buffer.data(), static_cast<int>(pending.buffer.size()),
              MPI_BYTE, static_cast<int>(peer), static_cast<int>(tag),
              MPI_COMM_WORLD, &pending.request);
    progressSends();
  }

  void recv(int64_t peer, int64_t tag, int64_t microbatch, void *data,
            size_t bytes) override {
    checkPeer(peer);
    checkTag(tag);
    Key key{peer, tag, microbatch};
    clock::time_point deadline =
        clock::now() + std::chrono::duration_cast<clock::duration>(
                           std::chrono::duration<double>(timeout()));
    Pause pause;
    while (true) {
      auto early = arrivedEarly.find(key);
      if (early != arrivedEarly.end()) {
        deliver(early->second, key, data, bytes);
        arrivedEarly.erase(early);
        progressSends();
        return;
      }
      progressSends();
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(static_cast<int>(peer), static_cast<int>(tag), MPI_COMM_WORLD,
                 &flag, &status);
      if (flag) {
        int received = 0;
        MPI_Get_count(&status, MPI_BYTE, &received);
        MessageBytes message(received);
        // Not MPI_Recv: a large message needs the sender's progress, and
        // a sender that died must not stop this wait from timing out.
        MPI_Request request;
        MPI_Irecv(message.data(), received, MPI_BYTE, static_cast<int>(peer),
                  static_cast<int>(tag), MPI_COMM_WORLD, &request);
        for (int done = 0; !done;) {
          MPI_Test(&request, &done, MPI_STATUS_IGNORE);
          if (!done)
            checkWait(key, deadline, pause);
        }
        int64_t messageMicrobatch = -1;
        if (message.size() >= sizeof(int64_t))
          std::memcpy(&messageMicrobatch, message.data(), sizeof(int64_t));
        if (messageMicrobatch == microbatch) {
          deliver(message, key, data, bytes);
          // The sends this message says were received go now, not at the
          // next call (schedule::sendsHeldUntil counts them so).
          progressSends();
          return;
        }
        arrivedEarly[{peer, tag, messageMicrobatch}] = std::move(message);
        continue;
      }
      checkWait(key, deadline, pause);
    }
  }

  void allReduceSum(const std::vector<int64_t> &group, int64_t generation,
                    float *values, size_t count) override {
    finishAllReduce(startAllReduceSum(group, generation, values, count));
  }

  int64_t startAllReduceSum(const std::vector<int64_t> &group,
                            int64_t generation, float *values,
                            size_t count) override {
    Reduction reduction;
    reduction.members = group.size();
    reduction.generation = generation;
    reduction.values = values;
    reduction.count = count;
    int64_t handle = nextReduction++;
    if (group.size() < 2) {
      reductions.emplace(handle, std::move(reduction));
      return handle;
    }
    for (int64_t member : group)
      checkPeer(member);
    reduction.comm = groupCommunicator(group, generation);
    reduction.what =
        "all-reduce " + std::to_string(generation) + " among devices";
    for (int64_t member : group)
      reduction.what +=
          (member == group.front() ? " " : ", ") + std::to_string(member);
    // In pieces that MPI's int counts address.
    for (size_t start = 0; start < count; start += kPiece) {
      int piece = static_cast<int>(std::min(kPiece, count - start));
      MPI_Request request;
      MPI_Iallreduce(MPI_IN_PLACE, values + start, piece, MPI_FLOAT, MPI_SUM,
                     reduction.comm, &request);
      reduction.requests.push_back(request);
    }
    reductions.emplace(handle, std::move(reduction));
    return handle;
  }

  void finishAllReduce(int64_t handle) override {
    auto found = reductions.find(handle);
    if (found == reductions.end())
      reportFailure("device " + std::to_string(self) +
                    ": finishes an all-reduce it never started");
    Reduction reduction = std::move(found->second);
    reductions.erase(found);
    if (reduction.members < 2)
      return;
    clock::time_point deadline =
        clock::now() + std::chrono::duration_cast<clock::duration>(
                           std::chrono::duration<double>(timeout()));
    for (MPI_Request &request : reduction.requests)
      waitFor(request, reduction.what, deadline);
    // Beyond two members MPI may add in another order on each: the first
    // member's sum becomes everyone's, so replicas stay identical.
    if (reduction.members > 2)
      for (size_t start = 0; start < reduction.count; start += kPiece) {
        int piece = static_cast<int>(std::min(kPiece, reduction.count - start));
        MPI_Request request;
        MPI_Ibcast(reduction.values + start, piece, MPI_FLOAT, 0,
                   reduction.comm, &request);
        waitFor(request, reduction.what, deadline);
      }
  }

private:
  using clock = std::chrono::steady_clock;
  using Key = std::tuple<int64_t, int64_t, int64_t>;
  struct Pending {
    MessageBytes buffer;
    MPI_Request request;
  };

  static std::string describe(const Key &key) {
    return "message tag " + std::to_string(std::get<1>(key)) +
           " of micro-batch " + std::to_string(std::get<2>(key)) +
           " from device " + std::to_string(std::get<0>(key));
  }

  /// The pause between two polls of one wait: 20 us at first, doubling up to
  /// 1 ms while nothing arrives. A wait of a micro-batch's compute (a
  /// pipeline bubble) then costs a few thousand wake-ups rather than one
  /// every 20 us, each a system call and a context switch (a quarter of a
  /// waiting stage's CPU time on GPT-2 124M, docs/Benchmarks.md), and a
  /// message that arrives late in it waits at most 1 ms more.
  struct Pause {
    std::chrono::microseconds next{20};
    void operator()() {
      std::this_thread::sleep_for(next);
      next = std::min(next * 2, std::chrono::microseconds(1000));
    }
  };

  /// Ends the wait for `key` when aborted or past `deadline`; otherwise
  /// pauses before the next poll.
  void checkWait(const Key &key, clock::time_point deadline, Pause &pause) {
    if (aborted || clock::now() > deadline)
      checkWait(describe(key), " arrived", deadline, pause);
    pause();
  }
  void checkWait(const std::string &what, const char *happened,
                 clock::time_point deadline, Pause &pause) {
    if (aborted) {
      std::lock_guard<std::mutex> lock(abortMutex);
      reportFailure("device " + std::to_string(self) + " waiting for " + what +
                    ": " + abortReason);
    }
    if (clock::now() > deadline)
      reportFailure("device " + std::to_string(self) + ": no " + what +
                    happened + " (waited " + std::to_string(timeout()) + " s)");
    pause();
  }

  /// Polls `request` until it completes, with the timeout and abort().
  void waitFor(MPI_Request &request, const std::string &what,
               clock::time_point deadline) {
    Pause pause;
    for (int done = 0; !done;) {
      progressSends();
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (!done)
        checkWait(what, " completed", deadline, pause);
    }
  }

  /// The MPI communicator of `group`'s processes, made at the group's
  /// first all-reduce. Making it blocks until every member calls, so the
  /// members first meet over send/recv (the default all-reduce of nothing),
  /// which a member that never comes ends with the timeout.
  MPI_Comm groupCommunicator(const std::vector<int64_t> &group,
                             int64_t generation) {
    auto found = groups.find(group);
    if (found != groups.end())
      return found->second;
    float nothing = 0;
    Communicator::allReduceSum(group, generation, &nothing, 0);
    std::vector<int> ranks(group.begin(), group.end());
    MPI_Group world, members;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(),
                   &members);
    MPI_Comm comm;
    MPI_Comm_create_group(MPI_COMM_WORLD, members,
                          static_cast<int>(tagOf(RuntimeTag::AllReduceGather)),
                          &comm);
    MPI_Group_free(&members);
    MPI_Group_free(&world);
    groups[group] = comm;
    return comm;
  }

  void deliver(const MessageBytes &message, const Key &key, void *data,
               size_t bytes) {
    if (message.size() != sizeof(int64_t) + bytes)
      reportFailure(describe(key) + " has " +
                    std::to_string(message.size() - sizeof(int64_t)) +
                    " bytes, device " + std::to_string(self) + " expects " +
                    std::to_string(bytes));
    if (bytes) // an empty message may come with no buffer (nullptr)
      std::memcpy(data, message.data() + sizeof(int64_t), bytes);
  }

  void progressSends() {
    for (auto it = sends.begin(); it != sends.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      it = done ? sends.erase(it) : std::next(it);
    }
  }

  void checkPeer(int64_t peer) const {
    if (peer < 0 || peer >= count)
      reportFailure("device " + std::to_string(peer) + " is not one of the " +
                    std::to_string(count) + " MPI processes");
  }

  void checkTag(int64_t tag) const {
    void *value = nullptr;
    int flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag);
    int64_t upperBound = flag ? *static_cast<int *>(value) : 32767;
    if (tag < 0 || tag > upperBound)
      reportFailure("tag " + std::to_string(tag) +
                    " is beyond this MPI's largest tag " +
                    std::to_string(upperBound));
  }

  bool ownsMpi;
  int64_t self = 0, count = 0;
  std::list<Pending> sends;
  std::map<Key, MessageBytes> arrivedEarly;
  std::map<std::vector<int64_t>, MPI_Comm> groups;
  /// All-reduces started and not finished.
  struct Reduction {
    size_t members = 0;
    int64_t generation = 0;
    float *values = nullptr;
    size_t count = 0;
    MPI_Comm comm = MPI_COMM_NULL;
    std::vector<MPI_Request> requests;
    std::string what;
  };
  std::map<int64_t, Reduction> reductions;
  int64_t nextReduction = 0;
  /// The largest piece one MPI call reduces (its counts are ints).
  static constexpr size_t kPiece = size_t(1) << 30;
  std::atomic<bool> aborted{false};
  std::mutex abortMutex;
  std::string abortReason;
};
} // namespace

llvm::Expected<std::unique_ptr<Communicator>>
ftpipe::runtime::createMpiCommunicator(int *argc, char ***argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
        MPI_SUCCESS)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "MPI_Init_thread failed");
  }
  return std::make_unique<MpiCommunicator>(!initialized);
}
