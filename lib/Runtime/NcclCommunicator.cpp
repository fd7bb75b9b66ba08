//===- NcclCommunicator.cpp - Point-to-point transfers over NCCL ----------===//

#include "FTPipe/Runtime/NcclCommunicator.h"
#include "FTPipe/Runtime/MpiCommunicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>
#include <vector>

using namespace ftpipe::runtime;

bool ftpipe::runtime::haveNccl() { return true; }

namespace {

/// Tags of the bootstrap and of the per-message headers on the MPI channel.
constexpr int64_t kUniqueIdTag = tagOf(RuntimeTag::NcclUniqueId);
constexpr int64_t kHeaderTag = tagOf(RuntimeTag::NcclHeader);
/// The NCCL id of a replica group's communicator (allReduceSum).
constexpr int64_t kGroupIdTag = tagOf(RuntimeTag::NcclGroupId);

struct Header {
  int64_t tag, microbatch, bytes;
};

std::string cudaMessage(const char *what, cudaError_t error) {
  return std::string(what) + ": " + cudaGetErrorString(error);
}

std::string ncclMessage(const char *what, ncclResult_t result) {
  return std::string(what) + ": " + ncclGetErrorString(result);
}

/// One direction between two devices: a two-rank NCCL communicator and the
/// stream its operations run on.
struct Link {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  /// This process's peer inside the two-rank communicator.
  int peerRank = 0;
  /// Sequence number of the next message.
  int64_t next = 0;
};

class NcclCommunicator : public Communicator {
public:
  NcclCommunicator(std::unique_ptr<Communicator> control)
      : control(std::move(control)), outgoing(this->control->devices()),
        incoming(this->control->devices()) {}

  /// Connects every ordered pair (a, b), in the order of (min, max, a) on
  /// all processes, so the pairwise rendezvous cannot deadlock.
  llvm::Error connect() {
    int64_t self = device(), count = devices();
    for (int64_t low = 0; low < count; ++low)
      for (int64_t high = low + 1; high < count; ++high)
        for (int64_t from : {low, high}) {
          int64_t to = from == low ? high : low;
          if (self != from && self != to)
            continue;
          ncclUniqueId id;
          int64_t pair = low * count + high;
          if (self == from) {
            if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
              return fail(ncclMessage("ncclGetUniqueId", r));
            control->send(to, kUniqueIdTag, 2 * pair + (from == low), &id,
                          sizeof(id));
          } else {
            control->recv(from, kUniqueIdTag, 2 * pair + (from == low), &id,
                          sizeof(id));
          }
          Link &link = self == from ? outgoing[to] : incoming[from];
          int rank = self == from ? 0 : 1;
          link.peerRank = 1 - rank;
          if (ncclResult_t r = ncclCommInitRank(&link.comm, 2, id, rank);
              r != ncclSuccess)
            return fail(ncclMessage("ncclCommInitRank", r));
          if (cudaError_t e = cudaStreamCreateWithFlags(&link.stream,
                                                        cudaStreamNonBlocking);
              e != cudaSuccess)
            return fail(cudaMessage("cudaStreamCreate", e));
        }
    return llvm::Error::success();
  }

  ~NcclCommunicator() override {
    auto close = [](Link &link) {
      if (link.stream)
        cudaStreamSynchronize(link.stream);
      if (link.comm)
        ncclCommDestroy(link.comm);
      if (link.stream)
        cudaStreamDestroy(link.stream);
    };
    for (std::vector<Link> *links : {&outgoing, &incoming})
      for (Link &link : *links)
        close(link);
    for (auto &entry : groups)
      close(entry.second);
    for (auto &[key, buffer] : early)
      cudaFree(buffer.first);
  }

  int64_t device() const override { return control->device(); }
  int64_t devices() const override { return control->devices(); }

  void abort(const std::string &reason) override {
    auto stop = [](Link &link) {
      if (link.comm) {
        ncclCommAbort(link.comm);
        link.comm = nullptr;
      }
    };
    for (std::vector<Link> *links : {&outgoing, &incoming})
      for (Link &link : *links)
        stop(link);
    for (auto &entry : groups)
      stop(entry.second);
    control->abort(reason);
  }

  void send(int64_t peer, int64_t tag, int64_t microbatch, const void *data,
            size_t bytes) override {
    if (tag >= kRuntimeTagBase)
      return control->send(peer, tag, microbatch, data, bytes);
    Link &link = linkTo(peer);
    Header header{tag, microbatch, static_cast<int64_t>(bytes)};
    control->send(peer, kHeaderTag, link.next++, &header, sizeof(header));
    // A stream-ordered copy: the caller may free `data` when this returns.
    // `data` is device memory, or host bytes (the stage ABI's transfers of
    // device buffers stage through host memory): cudaMemcpyDefault takes
    // either.
    void *staged = nullptr;
    check(cudaMallocAsync(&staged, bytes, link.stream), "cudaMallocAsync");
    check(cudaMemcpyAsync(staged, data, bytes, cudaMemcpyDefault, link.stream),
          "cudaMemcpyAsync");
    checkNccl(ncclSend(staged, bytes, ncclUint8, link.peerRank, link.comm,
                       link.stream),
              "ncclSend");
    check(cudaFreeAsync(staged, link.stream), "cudaFreeAsync");
  }

  void recv(int64_t peer, int64_t tag, int64_t microbatch, void *data,
            size_t bytes) override {
    if (tag >= kRuntimeTagBase)
      return control->recv(peer, tag, microbatch, data, bytes);
    Link &link = linkFrom(peer);
    Key key{peer, tag, microbatch};
    auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(timeout()));
    while (true) {
      auto it = early.find(key);
      if (it != early.end()) {
        expectBytes(key, it->second.second, bytes);
        check(cudaMemcpyAsync(data, it->second.first, bytes, cudaMemcpyDefault,
                              link.stream),
              "cudaMemcpyAsync");
        wait(link, describe(key), deadline);
        cudaFree(it->second.first);
        early.erase(it);
        return;
      }
      // The next message from `peer`, in the order it sent them.
      Header header;
      control->recv(peer, kHeaderTag, link.next++, &header, sizeof(header));
      Key arrived{peer, header.tag, header.microbatch};
      if (arrived == key) {
        expectBytes(key, header.bytes, bytes);
        if (isDeviceMemory(data)) {
          checkNccl(ncclRecv(data, bytes, ncclUint8, link.peerRank, link.comm,
                             link.stream),
                    "ncclRecv");
          wait(link, describe(key), deadline);
          return;
        }
        // Host bytes: NCCL receives into device memory only.
        void *buffer = nullptr;
        check(cudaMallocAsync(&buffer, bytes, link.stream), "cudaMallocAsync");
        checkNccl(ncclRecv(buffer, bytes, ncclUint8, link.peerRank, link.comm,
                           link.stream),
                  "ncclRecv");
        check(cudaMemcpyAsync(data, buffer, bytes, cudaMemcpyDeviceToHost,
                              link.stream),
              "cudaMemcpyAsync");
        check(cudaFreeAsync(buffer, link.stream), "cudaFreeAsync");
        wait(link, describe(key), deadline);
        return;
      }
      void *buffer = nullptr;
      check(cudaMalloc(&buffer, header.bytes), "cudaMalloc");
      checkNccl(ncclRecv(buffer, header.bytes, ncclUint8, link.peerRank,
                         link.comm, link.stream),
                "ncclRecv");
      early[arrived] = {buffer, header.bytes};
    }
  }

  /// ncclAllReduce on a communicator of the group's GPUs, on a device copy
  /// of `values` (host or device memory), polled like a receive. NCCL
  /// reduces each element once and passes the sum on, so every member gets
  /// the same bits. Not run here (no GPU; one GPU holds one NCCL rank).
  void allReduceSum(const std::vector<int64_t> &group, int64_t generation,
                    float *values, size_t count) override {
    if (group.size() < 2)
      return;
    auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(timeout()));
    Link &link = groupLink(group, generation);
    size_t bytes = count * sizeof(float);
    void *staged = nullptr;
    check(cudaMallocAsync(&staged, bytes, link.stream), "cudaMallocAsync");
    check(
        cudaMemcpyAsync(staged, values, bytes, cudaMemcpyDefault, link.stream),
        "cudaMemcpyAsync");
    checkNccl(ncclAllReduce(staged, staged, count, ncclFloat, ncclSum,
                            link.comm, link.stream),
              "ncclAllReduce");
    check(
        cudaMemcpyAsync(values, staged, bytes, cudaMemcpyDefault, link.stream),
        "cudaMemcpyAsync");
    check(cudaFreeAsync(staged, link.stream), "cudaFreeAsync");
    wait(link, "all-reduce " + std::to_string(generation), deadline);
  }

private:
  using Key = std::tuple<int64_t, int64_t, int64_t>;

  /// The NCCL communicator of `group`, made at its first all-reduce:
  /// ncclCommInitRank blocks until every member calls it, so the members
  /// first meet over MPI (the default all-reduce of nothing, with the
  /// timeout), then the first sends the others its NCCL id.
  Link &groupLink(const std::vector<int64_t> &group, int64_t generation) {
    auto found = groups.find(group);
    if (found != groups.end())
      return found->second;
    float nothing = 0;
    Communicator::allReduceSum(group, generation, &nothing, 0);
    int rank = 0;
    while (group[rank] != device())
      ++rank;
    ncclUniqueId id;
    if (rank == 0) {
      checkNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
      for (size_t m = 1; m < group.size(); ++m)
        control->send(group[m], kGroupIdTag, generation, &id, sizeof(id));
    } else {
      control->recv(group.front(), kGroupIdTag, generation, &id, sizeof(id));
    }
    Link &link = groups[group];
    checkNccl(
        ncclCommInitRank(&link.comm, static_cast<int>(group.size()), id, rank),
        "ncclCommInitRank");
    check(cudaStreamCreateWithFlags(&link.stream, cudaStreamNonBlocking),
          "cudaStreamCreate");
    return link;
  }

  static llvm::Error fail(const std::string &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  }
  static bool isDeviceMemory(const void *data) {
    cudaPointerAttributes attributes;
    if (cudaPointerGetAttributes(&attributes, data) != cudaSuccess) {
      cudaGetLastError(); // not a CUDA pointer: host memory
      return false;
    }
    return attributes.type == cudaMemoryTypeDevice;
  }
  static void check(cudaError_t error, const char *what) {
    if (error != cudaSuccess)
      reportFailure(cudaMessage(what, error));
  }
  static void checkNccl(ncclResult_t result, const char *what) {
    if (result != ncclSuccess)
      reportFailure(ncclMessage(what, result));
  }
  static std::string describe(const Key &key) {
    return "message tag " + std::to_string(std::get<1>(key)) +
           " of micro-batch " + std::to_string(std::get<2>(key)) +
           " from device " + std::to_string(std::get<0>(key));
  }
  void expectBytes(const Key &key, int64_t sent, size_t expected) const {
    if (sent != static_cast<int64_t>(expected))
      reportFailure(describe(key) + " has " + std::to_string(sent) +
                    " bytes, device " + std::to_string(device()) + " expects " +
                    std::to_string(expected));
  }
  Link &linkTo(int64_t peer) {
    if (peer == device() || peer < 0 || peer >= devices())
      reportFailure("NCCL transfers go to another device, not " +
                    std::to_string(peer));
    return outgoing[peer];
  }
  Link &linkFrom(int64_t peer) {
    if (peer == device() || peer < 0 || peer >= devices())
      reportFailure("NCCL transfers come from another device, not " +
                    std::to_string(peer));
    return incoming[peer];
  }
  /// Polls the link's stream until its work is done; fails when the
  /// timeout passes.
  void wait(Link &link, const std::string &what,
            std::chrono::steady_clock::time_point deadline) {
    while (true) {
      cudaError_t state = cudaStreamQuery(link.stream);
      if (state == cudaSuccess)
        return;
      if (state != cudaErrorNotReady)
        reportFailure(cudaMessage("waiting for a NCCL receive", state));
      if (std::chrono::steady_clock::now() > deadline)
        reportFailure("device " + std::to_string(device()) + ": " + what +
                      " did not complete (waited " + std::to_string(timeout()) +
                      " s)");
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  std::unique_ptr<Communicator> control;
  std::vector<Link> outgoing, incoming;
  /// Messages that arrived before they were asked for: buffer and bytes.
  std::map<Key, std::pair<void *, int64_t>> early;
  /// Replica groups' communicators (allReduceSum).
  std::map<std::vector<int64_t>, Link> groups;
};

} // namespace

llvm::Expected<std::unique_ptr<Communicator>>
ftpipe::runtime::createNcclCommunicator(int *argc, char ***argv, int gpu) {
  llvm::Expected<std::unique_ptr<Communicator>> control =
      createMpiCommunicator(argc, argv);
  if (!control)
    return control.takeError();
  int gpus = 0;
  if (cudaError_t e = cudaGetDeviceCount(&gpus); e != cudaSuccess || !gpus)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   e != cudaSuccess
                                       ? cudaMessage("no CUDA device", e)
                                       : std::string("no CUDA device"));
  if (gpu < 0) {
    const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    gpu = (local ? std::atoi(local) : 0) % gpus;
  }
  if (cudaError_t e = cudaSetDevice(gpu); e != cudaSuccess)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   cudaMessage("cudaSetDevice", e));
  auto communicator = std::make_unique<NcclCommunicator>(std::move(*control));
  if (llvm::Error error = communicator->connect())
    return std::move(error);
  return std::unique_ptr<Communicator>(std::move(communicator));
}
