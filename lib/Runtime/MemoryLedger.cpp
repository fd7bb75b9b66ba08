//===- MemoryLedger.cpp - Bytes each device holds, by kind ----------------===//
//
// The ledgers of MemoryLedger.h: one per device plus the process's own, each
// guarded by its own mutex (charges come from every thread of a device:
// the executor, generated code, the communicator).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/MemoryLedger.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

struct Ledger {
  std::mutex mutex;
  FTPipeMemLedger state = {};
};

Ledger &ledger(int32_t device) {
  // Never destroyed: blocks may be freed during static destruction.
  static Ledger *ledgers = new Ledger[FTPIPE_MEM_MAX_DEVICES + 1];
  if (device < -1 || device >= FTPIPE_MEM_MAX_DEVICES)
    device = -1;
  return ledgers[device + 1];
}

thread_local int32_t threadDevice = -1;

/// The head in front of every ledger block.
struct alignas(64) BlockHead {
  size_t bytes;
  int32_t device;
  int32_t kind;
};
static_assert(sizeof(BlockHead) == 64, "the head keeps data 64-byte aligned");

BlockHead *headOf(void *data) { return static_cast<BlockHead *>(data) - 1; }

} // namespace

extern "C" void ftpipe_mem_set_thread_device(int32_t device) {
  threadDevice = device;
}

extern "C" int32_t ftpipe_mem_thread_device(void) { return threadDevice; }

extern "C" void ftpipe_mem_charge(int32_t device, int32_t kind, int64_t bytes) {
  if (kind < 0 || kind >= FTPIPE_MEM_KINDS || bytes == 0)
    return;
  Ledger &l = ledger(device);
  std::lock_guard<std::mutex> lock(l.mutex);
  l.state.now[kind] += bytes;
  int64_t total = 0;
  for (int64_t value : l.state.now)
    total += value;
  if (total > l.state.peak) {
    l.state.peak = total;
    std::memcpy(l.state.atPeak, l.state.now, sizeof(l.state.now));
  }
}

extern "C" void ftpipe_mem_read(int32_t device, FTPipeMemLedger *out) {
  Ledger &l = ledger(device);
  std::lock_guard<std::mutex> lock(l.mutex);
  *out = l.state;
}

extern "C" void ftpipe_mem_reset_peak(int32_t device) {
  Ledger &l = ledger(device);
  std::lock_guard<std::mutex> lock(l.mutex);
  l.state.peak = 0;
  for (int64_t value : l.state.now)
    l.state.peak += value;
  std::memcpy(l.state.atPeak, l.state.now, sizeof(l.state.now));
}

void *ftpipe::runtime::ledgerAllocate(size_t bytes, FTPipeMemKind kind) {
  size_t rounded =
      (bytes + sizeof(BlockHead) - 1) / sizeof(BlockHead) * sizeof(BlockHead);
  void *block =
      std::aligned_alloc(alignof(BlockHead), sizeof(BlockHead) + rounded);
  if (!block) {
    std::fprintf(stderr, "ftpipe runtime: out of memory allocating %zu bytes\n",
                 bytes);
    std::exit(70);
  }
  auto *head = static_cast<BlockHead *>(block);
  head->bytes = bytes;
  head->device = threadDevice;
  head->kind = kind;
  ftpipe_mem_charge(head->device, kind, static_cast<int64_t>(bytes));
  return head + 1;
}

void ftpipe::runtime::ledgerFree(void *data) {
  if (!data)
    return;
  BlockHead *head = headOf(data);
  ftpipe_mem_charge(head->device, head->kind,
                    -static_cast<int64_t>(head->bytes));
  std::free(head);
}

void ftpipe::runtime::ledgerRecharge(void *data, int32_t device) {
  if (!data)
    return;
  BlockHead *head = headOf(data);
  if (head->device == device)
    return;
  auto bytes = static_cast<int64_t>(head->bytes);
  ftpipe_mem_charge(head->device, head->kind, -bytes);
  head->device = device;
  ftpipe_mem_charge(device, head->kind, bytes);
}
