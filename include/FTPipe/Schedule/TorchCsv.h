//===- TorchCsv.h - torch.distributed.pipelining's CSV ----------*- C++ -*-===//
//
// torch.distributed.pipelining writes and reads a schedule as a CSV in its
// `compute_only` form (`_dump_csv` / `_load_csv`): row r is rank r's list of
// compute actions in torch's text form, "<stage>F<mb>", "<stage>B<mb>" (full
// backward), "<stage>I<mb>" (input part), "<stage>W<mb>" (weight part), and
// empty cells for idle slots. Ranks are our devices and torch's stage
// indices our stages; a CSV holds one step and no optimizer update. No MLIR
// here.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SCHEDULE_TORCHCSV_H
#define FTPIPE_SCHEDULE_TORCHCSV_H

#include "FTPipe/Schedule/Schedule.h"

namespace ftpipe {
namespace schedule {

/// Writes a one-step schedule (its updates dropped) as torch's compute_only
/// CSV, one row per device ("\r\n" line ends, as Python's csv module).
/// Fails for a schedule of several steps.
llvm::Expected<std::string> toTorchCsv(const Schedule &schedule);

/// Reads torch's compute_only CSV: row r is device r's list, idle cells
/// skipped, and U0 ends every list (one step). Fails on an action that is
/// not F, B, I or W (compute_comms rows: SEND_F, RECV_B, ...).
llvm::Expected<Schedule> parseTorchCsv(llvm::StringRef text);

} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_SCHEDULE_TORCHCSV_H
