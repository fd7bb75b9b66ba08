//===- RunFlags.h - ftpipe-run's command line -------------------*- C++ -*-===//
//
// The flags of ftpipe-run, registered in RunFlags.cpp by area (an
// llvm::cl::OptionCategory each, so `--help` lists them grouped and without
// LLVM's own options), and what parsing them gives: the library's
// ModelOptions and RunOptions (Run.h) plus the few choices the tool makes
// itself (--np, --print-schedule, --format).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_TOOLS_FTPIPE_RUN_RUNFLAGS_H
#define FTPIPE_TOOLS_FTPIPE_RUN_RUNFLAGS_H

#include "FTPipe/Runtime/Run.h"

#include "llvm/Support/Error.h"

namespace ftpipe {

/// What ftpipe-run's command line asks for.
struct RunFlags {
  runtime::ModelOptions model;
  runtime::RunOptions run;
  /// --np: start `mpirun -np P` with this command line; 0: run here.
  int64_t np = 0;
  /// --print-schedule: print the devices' action lists and exit, as
  /// torch.distributed.pipelining's CSV with --format csv.
  bool printSchedule = false, csvSchedule = false;
};

/// Parses argv (a malformed flag ends the process, as llvm::cl does) and
/// the values it names (--schedule, --stashing, --optimizer, --format); an
/// error names the flag and the value.
llvm::Expected<RunFlags> parseRunFlags(int argc, char **argv);

} // namespace ftpipe

#endif // FTPIPE_TOOLS_FTPIPE_RUN_RUNFLAGS_H
