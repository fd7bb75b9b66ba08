//===- ArtifactManifest.h - What ftpipe-compile's manifest says -*- C++ -*-===//
//
// The runtime's view of `DIR/manifest.json` (its objects in
// ManifestSchema.h, documented in docs/Compile.md): devices and their
// artifacts, stages and their entry points with every argument and result,
// the transfers, the parameters with their owner and copies, the data inputs
// and the loss, indexed for the loader and the executor. readManifest reads
// the file through the schema's fromJSON and checks that it is
// self-consistent (every reference resolves, one owner per parameter, the
// owner the lowest device that reads it), so the loader and the executor can
// rely on it; what it refuses is named with its place in the file.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_ARTIFACTMANIFEST_H
#define FTPIPE_RUNTIME_ARTIFACTMANIFEST_H

#include "FTPipe/Runtime/ManifestSchema.h"
#include "FTPipe/Schedule/Memory.h"
#include "FTPipe/Schedule/Replicas.h"
#include "FTPipe/Schedule/Schedule.h"
#include "FTPipe/Schedule/TrainingSetup.h"

#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

struct ArtifactManifest {
  /// The directory the manifest was read from.
  std::string directory;
  std::string target;
  /// Per device, its artifact's file name.
  std::vector<std::string> artifacts;
  /// Indexed by stage id (stages[s].id == s).
  std::vector<ManifestStage> stages;
  /// The stages in the order they run, producers first: a permutation of the
  /// stage ids, never empty after reading (0, 1, ... where the file has none).
  std::vector<int64_t> stageOrder;
  std::map<std::string, EntryPoint> entryPoints;
  /// Each parameter's devices ascending, the owner first.
  std::map<std::string, ManifestParameter> parameters;
  std::map<std::string, ManifestInput> inputs;
  /// The stage whose forward returns the loss (-1: none).
  int64_t lossStage = -1;
  /// The training setup the plan was made for (`training`), when recorded.
  std::optional<schedule::TrainingSetup> training;
  /// Per device, what the plan fixes about its memory (`device_memory`),
  /// empty when not recorded.
  std::vector<schedule::DeviceMemoryInputs> deviceMemory;
  /// Processes per device (`replicas`, schedule/Replicas.h) the plan was
  /// made for, when recorded: ftpipe-run's default.
  std::optional<schedule::ReplicaLayout> replicas;
  /// How ftpipe-compile made the plan (`compile`), when recorded.
  std::optional<ManifestCompile> compile;

  int64_t devices() const { return static_cast<int64_t>(artifacts.size()); }
  /// The stages with their producers (a forward that receives tag t comes
  /// after the forward that sends it), their devices and the tied groups.
  schedule::StageGraph stageGraph() const;
};

/// Reads and checks `directory`/manifest.json.
llvm::Expected<ArtifactManifest> readManifest(llvm::StringRef directory);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_ARTIFACTMANIFEST_H
