/*===- MemoryLedger.h - Bytes each device holds, by kind -----------*- C -*-===*
 *
 * Every byte a device's tensors occupy (what would live in GPU memory) is
 * charged here when it is allocated and released when it is freed: the
 * runtime's tensors and optimizer state (through LedgerAllocator), the
 * buffers of generated code and the allocator's cache (HostAllocator.cpp),
 * and messages in flight (the communicators). A ledger per device keeps the
 * bytes now and the largest total so far with its kinds at that moment, so a
 * run reports its peak, and what made it, without sampling.
 *
 * The device charged is the calling thread's (ftpipe_mem_set_thread_device;
 * none: the process's own ledger, e.g. a data set loaded before the run), and
 * a release goes back to the ledger its allocation was charged to, whichever
 * thread frees it. It lives in FTPipeStageABI, so the runtime and every
 * device artifact in a process share one set of ledgers.
 *
 *===----------------------------------------------------------------------===*/

#ifndef FTPIPE_RUNTIME_MEMORYLEDGER_H
#define FTPIPE_RUNTIME_MEMORYLEDGER_H

#include "FTPipe/Runtime/StageABI.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the bytes are. */
typedef enum FTPipeMemKind {
  /* The runtime's tensors: weights, gradients, optimizer state, weight
   * versions, saved values, data slices and every copy it makes. */
  FTPIPE_MEM_RUNTIME = 0,
  /* Buffers that generated code allocated and has not freed. */
  FTPIPE_MEM_GENERATED = 1,
  /* Freed buffers of generated code that the allocator keeps for reuse. */
  FTPIPE_MEM_CACHED = 2,
  /* Messages sent and not yet received or completed. */
  FTPIPE_MEM_MESSAGES = 3,
  FTPIPE_MEM_KINDS = 4
} FTPipeMemKind;

/* Ledgers exist for devices 0 .. FTPIPE_MEM_MAX_DEVICES - 1; -1 is the
 * process's own ledger. */
#define FTPIPE_MEM_MAX_DEVICES 256

/* Makes `device` (or -1) the device the calling thread charges. */
FTPIPE_RT_EXPORT void ftpipe_mem_set_thread_device(int32_t device);
FTPIPE_RT_EXPORT int32_t ftpipe_mem_thread_device(void);

/* Adds `bytes` (negative: releases) of `kind` to `device`'s ledger. */
FTPIPE_RT_EXPORT void ftpipe_mem_charge(int32_t device, int32_t kind,
                                        int64_t bytes);

/* One ledger: the bytes now by kind, the largest total so far and the
 * kinds at that moment. */
typedef struct FTPipeMemLedger {
  int64_t now[FTPIPE_MEM_KINDS];
  int64_t peak;
  int64_t atPeak[FTPIPE_MEM_KINDS];
} FTPipeMemLedger;

FTPIPE_RT_EXPORT void ftpipe_mem_read(int32_t device, FTPipeMemLedger *out);
/* Restarts `device`'s peak from its bytes now. */
FTPIPE_RT_EXPORT void ftpipe_mem_reset_peak(int32_t device);

#ifdef __cplusplus
}

#include <cstddef>

namespace ftpipe {
namespace runtime {

/// Allocation functions that charge the calling thread's device: each block
/// carries a 64-byte head recording the device and size, so it is released
/// from the same ledger wherever it is freed; the data is 64-byte aligned.
/// Out of memory ends the process with a message (no exceptions here).
void *ledgerAllocate(size_t bytes, FTPipeMemKind kind);
void ledgerFree(void *data);
/// Moves the block's charge to `device` (the runtime adopts tensors made
/// before the run, e.g. the weights).
void ledgerRecharge(void *data, int32_t device);

/// A std::allocator whose blocks are charged to the device's ledger.
template <typename T, FTPipeMemKind Kind = FTPIPE_MEM_RUNTIME>
struct LedgerAllocator {
  using value_type = T;
  template <typename U> struct rebind {
    using other = LedgerAllocator<U, Kind>;
  };
  LedgerAllocator() = default;
  template <typename U>
  LedgerAllocator(const LedgerAllocator<U, Kind> &) noexcept {}
  T *allocate(size_t n) {
    return static_cast<T *>(ledgerAllocate(n * sizeof(T), Kind));
  }
  void deallocate(T *data, size_t) noexcept { ledgerFree(data); }
  template <typename U>
  bool operator==(const LedgerAllocator<U, Kind> &) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const LedgerAllocator<U, Kind> &) const noexcept {
    return false;
  }
};

} // namespace runtime
} // namespace ftpipe

#endif /* __cplusplus */

#endif /* FTPIPE_RUNTIME_MEMORYLEDGER_H */
