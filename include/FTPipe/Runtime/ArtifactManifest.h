//===- ArtifactManifest.h - What ftpipe-compile's manifest says -*- C++ -*-===//
//
// The runtime's reading of `DIR/manifest.json` (schema in docs/Compile.md):
// devices and their artifacts, stages and their entry points with every
// argument and result, the transfers, the parameters with their owner and
// copies, the data inputs and the loss. readManifest checks that the file is
// self-consistent (every reference resolves, one owner per parameter, the
// owner the lowest device that reads it), so the loader and the executor can
// rely on it; what it refuses is named with its place in the file.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_ARTIFACTMANIFEST_H
#define FTPIPE_RUNTIME_ARTIFACTMANIFEST_H

#include "FTPipe/Runtime/Tensor.h"
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

/// A tensor as the manifest describes it (`index` reads as I64, `i1` as
/// Bool).
struct ManifestTensor {
  std::vector<int64_t> shape;
  DType type = DType::F32;
  /// Data inputs that index a table: values must lie in [0, indexBound) or
  /// equal indexIgnored (`index_bound`, `index_ignored`).
  std::optional<int64_t> indexBound, indexIgnored;
};

/// One argument or result of an entry point.
struct EntryValue {
  enum class Kind : uint8_t {
    Microbatch,
    Param,
    Input,
    Saved,
    Loss,
    Grad,
    Output
  };
  Kind kind = Kind::Param;
  /// Param, Grad: Hugging Face name; Input: the data input's name.
  std::string name;
  /// Saved: its index K among the forward's saved results.
  int64_t saved = -1;
  ManifestTensor tensor;
};

struct ManifestTransfer {
  bool send = true;
  int64_t peer = 0, tag = 0;
  ManifestTensor tensor;
};

struct EntryPoint {
  std::string name, symbol;
  int64_t device = 0, stage = 0;
  bool backward = false;
  std::vector<EntryValue> arguments, results;
  std::vector<ManifestTransfer> transfers;
};

struct ManifestStage {
  int64_t device = 0;
  /// Names of the entry points (backward empty for a forward-only build).
  std::string forward, backward;
};

struct ManifestParameter {
  ManifestTensor tensor;
  /// Ascending; the first is the owner.
  std::vector<int64_t> devices;
};

struct ArtifactManifest {
  /// The directory the manifest was read from.
  std::string directory;
  std::string target;
  /// Per device, its artifact's file name.
  std::vector<std::string> artifacts;
  /// Indexed by stage id.
  std::vector<ManifestStage> stages;
  std::vector<int64_t> stageOrder;
  std::map<std::string, EntryPoint> entryPoints;
  std::map<std::string, ManifestParameter> parameters;
  std::map<std::string, ManifestTensor> inputs;
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
