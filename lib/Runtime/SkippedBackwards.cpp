//===- SkippedBackwards.cpp - Backwards a frozen prefix does not need -----===//
//
// Which stages' backwards a run with a frozen prefix skips, and which sends
// of the other backwards it drops (SkippedBackwards.h), from the manifest.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/SkippedBackwards.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <tuple>

using namespace ftpipe::runtime;

std::set<int64_t>
ftpipe::runtime::frozenClosure(const ArtifactManifest &manifest,
                               const std::set<std::string> &frozen) {
  std::set<int64_t> closure;
  if (frozen.empty())
    return closure;
  schedule::StageGraph graph = manifest.stageGraph();
  // Stages in the order they run, so producers come first.
  for (int64_t s : manifest.stageOrder) {
    const EntryPoint &forward =
        manifest.entryPoints.at(manifest.stages[s].forward);
    bool allFrozen = llvm::all_of(forward.arguments, [&](const EntryValue &v) {
      return v.kind != EntryValue::Kind::Param || frozen.count(v.name);
    });
    if (s != manifest.lossStage && allFrozen &&
        llvm::all_of(graph.producers[s],
                     [&](int64_t p) { return closure.count(p) != 0; }))
      closure.insert(s);
  }
  return closure;
}

SkippedBackwards
ftpipe::runtime::planSkippedBackwards(const ArtifactManifest &manifest,
                                      const std::set<std::string> &frozen,
                                      int64_t from) {
  SkippedBackwards skipped;
  skipped.from = from;
  skipped.stages = frozenClosure(manifest, frozen);
  if (skipped.stages.empty())
    return skipped;
  // The stage whose backward receives each message: (from, to, tag).
  std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> receiver;
  for (const ManifestStage &stage : manifest.stages)
    for (const std::string *entry : {&stage.backward, &stage.backwardInput})
      if (!entry->empty())
        for (const ManifestTransfer &transfer :
             manifest.entryPoints.at(*entry).transfers)
          if (!transfer.send)
            receiver[{transfer.peer, stage.device, transfer.tag}] = stage.id;
  for (const ManifestStage &stage : manifest.stages) {
    if (skipped.stages.count(stage.id))
      continue;
    for (const std::string *entry : {&stage.backward, &stage.backwardInput}) {
      if (entry->empty())
        continue;
      for (const ManifestTransfer &transfer :
           manifest.entryPoints.at(*entry).transfers) {
        auto to = receiver.find({stage.device, transfer.peer, transfer.tag});
        if (transfer.send && to != receiver.end() &&
            skipped.stages.count(to->second))
          skipped.droppedSends[stage.id].insert({transfer.peer, transfer.tag});
      }
    }
  }
  return skipped;
}

std::string SkippedBackwards::describe(int64_t step) const {
  if (stages.empty())
    return llvm::formatv("frozen backwards: from step {0}, none skipped", step)
        .str();
  size_t sends = 0;
  for (const auto &entry : droppedSends)
    sends += entry.second.size();
  return llvm::formatv("frozen backwards: from step {0}, the backwards of "
                       "stages {1} are skipped (only frozen parameters and "
                       "such producers); {2} input-gradient sends to them "
                       "dropped",
                       step,
                       llvm::join(llvm::map_range(stages,
                                                  [](int64_t s) {
                                                    return std::to_string(s);
                                                  }),
                                  ", "),
                       sends)
      .str();
}
