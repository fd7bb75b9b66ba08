//===- RunLimits.h - Limits on a run's settings -----------------*- C++ -*-===//
//
// Every size and number a user gives a run is checked before anything is
// allocated or trained, and the message names the option: the schedule is
// built whole (every action of every step), so huge --steps or
// --micro-batches ran out of memory, negative ones aborted; a learning rate
// or weight decay of nan, inf or below zero trained on nonsense; a timeout of
// inf turned every receive into a wait without end.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_RUNLIMITS_H
#define FTPIPE_RUNTIME_RUNLIMITS_H

#include "FTPipe/Runtime/Executor.h"

#include "llvm/Support/Error.h"

namespace ftpipe {
namespace runtime {

/// The most schedule actions a run builds (steps x micro-batches x stages x
/// 2, forwards and backwards): 2^26, about 2 GiB of lists.
inline constexpr int64_t kMaxScheduleActions = int64_t(1) << 26;
/// The longest wait for a message, in seconds (a week).
inline constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600;

/// Checks --steps, --micro-batches (against `stages`), --lr,
/// --weight-decay and --warmup as `config` holds them.
llvm::Error checkRunSettings(const ExecutorConfig &config, int64_t stages);

/// Checks a time in seconds given as option `option` (--timeout,
/// --failure-timeout): finite, above zero, at most kMaxTimeoutSeconds.
llvm::Error checkTimeout(double seconds, llvm::StringRef option);

/// Checks a size option (`option` = value) against [1, max].
llvm::Error checkSizeOption(int64_t value, int64_t max, llvm::StringRef option);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_RUNLIMITS_H
