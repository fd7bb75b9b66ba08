//===- StageABI.cpp - The C functions generated stage code calls ----------===//
//
// `ftpipe_rt_send_T` / `ftpipe_rt_recv_T`: gather a (possibly strided) memref
// into a contiguous buffer and hand it to the calling thread's Transport, or
// scatter a received buffer into one; through the registered buffer access
// functions where buffers are not host memory (ftpipe_rt_set_buffer_access). A
// transfer with no transport, or one the transport cannot complete, ends the
// process with a message: generated code has no way to handle an error, and
// continuing would compute garbage.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/StageABI.h"
#include "FTPipe/Runtime/Communicator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace ftpipe::runtime;

namespace {
/// A view of an unranked memref descriptor.
struct MemRefView {
  char *base;
  int64_t rank;
  const int64_t *sizes;
  const int64_t *strides;
  size_t elementBytes;

  MemRefView(int64_t rank, void *descriptor, size_t elementBytes)
      : rank(rank), elementBytes(elementBytes) {
    auto *head = static_cast<FTPipeMemRefHead *>(descriptor);
    base = static_cast<char *>(head->aligned) + head->offset * elementBytes;
    sizes = reinterpret_cast<const int64_t *>(head + 1);
    strides = sizes + rank;
  }

  size_t elements() const {
    size_t count = 1;
    for (int64_t d = 0; d < rank; ++d)
      count *= static_cast<size_t>(sizes[d]);
    return count;
  }

  bool contiguous() const {
    int64_t expected = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (sizes[d] != 1 && strides[d] != expected)
        return false;
      expected *= sizes[d];
    }
    return true;
  }

  /// Calls `visit(elementPointer)` for every element in row-major order.
  template <typename Visit> void forEach(Visit visit) const {
    size_t count = elements();
    if (count == 0)
      return;
    std::vector<int64_t> index(rank, 0);
    for (size_t i = 0; i < count; ++i) {
      int64_t offset = 0;
      for (int64_t d = 0; d < rank; ++d)
        offset += index[d] * strides[d];
      visit(base + offset * elementBytes);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < sizes[d])
          break;
        index[d] = 0;
      }
    }
  }
};

Transport &currentTransport(const char *what, int64_t peer, int64_t tag) {
  Transport *transport = threadTransport();
  if (!transport) {
    std::fprintf(stderr,
                 "ftpipe runtime: %s of tag %lld to/from device %lld with no "
                 "transport set for this thread\n",
                 what, static_cast<long long>(tag),
                 static_cast<long long>(peer));
    std::exit(70);
  }
  return *transport;
}

/// ftpipe_rt_set_buffer_access's functions; null for host memory.
FTPipeBufferOut bufferOut = nullptr;
FTPipeBufferIn bufferIn = nullptr;

void sendMemRef(int64_t peer, int64_t tag, int64_t microbatch, int64_t rank,
                void *descriptor, size_t elementBytes) {
  Transport &transport = currentTransport("send", peer, tag);
  MemRefView view(rank, descriptor, elementBytes);
  size_t bytes = view.elements() * elementBytes;
  if (bufferOut) {
    MessageBytes packed(bytes);
    bufferOut(rank, descriptor, static_cast<int64_t>(elementBytes),
              packed.data());
    transport.send(peer, tag, microbatch, packed.data(), bytes);
    return;
  }
  if (view.contiguous()) {
    transport.send(peer, tag, microbatch, view.base, bytes);
    return;
  }
  MessageBytes packed(bytes);
  char *out = packed.data();
  view.forEach([&](const char *element) {
    std::memcpy(out, element, elementBytes);
    out += elementBytes;
  });
  transport.send(peer, tag, microbatch, packed.data(), bytes);
}

void recvMemRef(int64_t peer, int64_t tag, int64_t microbatch, int64_t rank,
                void *descriptor, size_t elementBytes) {
  Transport &transport = currentTransport("receive", peer, tag);
  MemRefView view(rank, descriptor, elementBytes);
  size_t bytes = view.elements() * elementBytes;
  if (bufferIn) {
    MessageBytes packed(bytes);
    transport.recv(peer, tag, microbatch, packed.data(), bytes);
    bufferIn(rank, descriptor, static_cast<int64_t>(elementBytes),
             packed.data());
    return;
  }
  if (view.contiguous()) {
    transport.recv(peer, tag, microbatch, view.base, bytes);
    return;
  }
  MessageBytes packed(bytes);
  transport.recv(peer, tag, microbatch, packed.data(), bytes);
  const char *in = packed.data();
  view.forEach([&](char *element) {
    std::memcpy(element, in, elementBytes);
    in += elementBytes;
  });
}

std::unique_ptr<LocalMailbox> localMailbox;
} // namespace

void ftpipe_rt_index_error(int64_t rank, void *site, int64_t value,
                           int64_t rows) {
  std::string where;
  if (rank == 1 && site) {
    MemRefView view(rank, site, 1);
    view.forEach([&](const char *c) {
      if (*c)
        where += *c;
    });
  }
  reportFailure((where.empty() ? "a gather" : where) + ": index " +
                std::to_string(value) + " computed by the model is outside " +
                "the " + std::to_string(rows) +
                " rows of its table; the run stops");
}

#define FTPIPE_RT_DEFINE_TRANSFERS(T, BYTES)                                   \
  void ftpipe_rt_send_##T(int64_t peer, int64_t tag, int64_t microbatch,       \
                          int64_t rank, void *descriptor) {                    \
    sendMemRef(peer, tag, microbatch, rank, descriptor, BYTES);                \
  }                                                                            \
  void ftpipe_rt_recv_##T(int64_t peer, int64_t tag, int64_t microbatch,       \
                          int64_t rank, void *descriptor) {                    \
    recvMemRef(peer, tag, microbatch, rank, descriptor, BYTES);                \
  }

FTPIPE_RT_DEFINE_TRANSFERS(f64, 8)
FTPIPE_RT_DEFINE_TRANSFERS(f32, 4)
FTPIPE_RT_DEFINE_TRANSFERS(f16, 2)
FTPIPE_RT_DEFINE_TRANSFERS(bf16, 2)
FTPIPE_RT_DEFINE_TRANSFERS(i64, 8)
FTPIPE_RT_DEFINE_TRANSFERS(i32, 4)
FTPIPE_RT_DEFINE_TRANSFERS(i16, 2)
FTPIPE_RT_DEFINE_TRANSFERS(i8, 1)
FTPIPE_RT_DEFINE_TRANSFERS(i1, 1)

void ftpipe_rt_set_buffer_access(FTPipeBufferOut out, FTPipeBufferIn in) {
  bufferOut = out;
  bufferIn = in;
}

void ftpipe_rt_local_begin(int64_t devices) {
  // One thread runs the devices in turn: a missing message is an ordering
  // error, reported at once instead of waited for.
  localMailbox = std::make_unique<LocalMailbox>(devices, /*timeout=*/0);
  setThreadTransport(&localMailbox->endpoint(0));
}

void ftpipe_rt_local_select(int64_t device) {
  if (!localMailbox) {
    std::fprintf(stderr, "ftpipe runtime: ftpipe_rt_local_select before "
                         "ftpipe_rt_local_begin\n");
    std::exit(70);
  }
  setThreadTransport(&localMailbox->endpoint(device));
}

int64_t ftpipe_rt_local_end(void) {
  int64_t pending = localMailbox ? localMailbox->pending() : 0;
  setThreadTransport(nullptr);
  localMailbox.reset();
  return pending;
}
