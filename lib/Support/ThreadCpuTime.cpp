//===- ThreadCpuTime.cpp - The calling thread's CPU time ------------------===//
//
// clock_gettime(CLOCK_THREAD_CPUTIME_ID) in seconds.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Support/ThreadCpuTime.h"

#include <ctime>

double ftpipe::support::threadCpuSeconds() {
  timespec time;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time);
  return double(time.tv_sec) + 1e-9 * double(time.tv_nsec);
}
