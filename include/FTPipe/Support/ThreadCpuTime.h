//===- ThreadCpuTime.h - The calling thread's CPU time ----------*- C++ -*-===//
//
// The calling thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID). Unlike
// wall time it does not count the time the thread waits for a core, so the
// trace's cpu_ms, the measured CPU rates and the activation cache's savings
// hold on a loaded machine. One reader for all of them.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SUPPORT_THREADCPUTIME_H
#define FTPIPE_SUPPORT_THREADCPUTIME_H

namespace ftpipe {
namespace support {

/// Seconds of CPU the calling thread has used since it started.
double threadCpuSeconds();

} // namespace support
} // namespace ftpipe

#endif // FTPIPE_SUPPORT_THREADCPUTIME_H
