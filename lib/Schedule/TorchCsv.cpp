//===- TorchCsv.cpp - Schedules in torch.distributed.pipelining's CSV -----===//
//
// torch's action text is ours for F, B, I and W, so both directions go
// through Action::str and parseAction; only the row form differs.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/TorchCsv.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

using namespace ftpipe::schedule;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<std::string>
ftpipe::schedule::toTorchCsv(const Schedule &schedule) {
  std::string out;
  for (const std::vector<Action> &actions : schedule.devices) {
    bool first = true;
    for (const Action &action : actions) {
      if (action.kind == ActionKind::Update) {
        if (action.index > 0)
          return fail("torch's CSV holds one step; the schedule has update " +
                      action.str());
        continue;
      }
      out += (first ? "" : ",") + action.str();
      first = false;
    }
    out += "\r\n";
  }
  return out;
}

llvm::Expected<Schedule> ftpipe::schedule::parseTorchCsv(llvm::StringRef text) {
  Schedule schedule;
  llvm::SmallVector<llvm::StringRef> rows;
  text.split(rows, '\n');
  // The last line end leaves one empty row.
  if (!rows.empty() && rows.back().trim().empty())
    rows.pop_back();
  for (llvm::StringRef row : rows) {
    std::vector<Action> &actions = schedule.devices.emplace_back();
    llvm::SmallVector<llvm::StringRef> cells;
    row.rtrim("\r").split(cells, ',');
    for (llvm::StringRef cell : cells) {
      cell = cell.trim();
      if (cell.empty())
        continue;
      llvm::Expected<Action> action = parseAction(cell);
      if (!action || action->kind == ActionKind::Update) {
        llvm::consumeError(action.takeError());
        return fail("rank " + llvm::Twine(schedule.devices.size() - 1) + ": '" +
                    cell +
                    "' is not a compute action of torch's compute_only CSV "
                    "(\"0F1\", \"0B1\", \"1I0\", \"1W0\")");
      }
      actions.push_back(*action);
    }
    actions.push_back(Action::update(0));
  }
  return schedule;
}
