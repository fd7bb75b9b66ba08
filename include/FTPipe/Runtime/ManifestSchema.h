//===- ManifestSchema.h - manifest.json, object by object -------*- C++ -*-===//
//
// The contract between ftpipe-compile and the runtime: one struct per object
// of DIR/manifest.json (docs/Compile.md, "manifest.json"), each with its
// toJSON and fromJSON side by side. ftpipe-compile fills a ManifestFile and
// writes toJSON's value; the runtime reads the file with fromJSON
// (readManifest, ArtifactManifest.h), which refuses a missing or mistyped
// field naming its path ("manifest.entry_points[3].arguments[1].shape:
// expected array"). The checks between the parts (every reference resolves)
// are readManifest's. MLIR-free: both halves link it (FTPipeManifestSchema).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_MANIFESTSCHEMA_H
#define FTPIPE_RUNTIME_MANIFESTSCHEMA_H

#include "FTPipe/Runtime/DType.h"
#include "FTPipe/Schedule/Memory.h"
#include "FTPipe/Schedule/Replicas.h"
#include "FTPipe/Schedule/TrainingSetup.h"

#include "llvm/Support/JSON.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

/// The format and the version a manifest names (`format`, `version`).
inline constexpr const char *kManifestFormat = "ftpipe-manifest";
inline constexpr int64_t kManifestVersion = 1;

/// A tensor as the manifest describes it (`shape`, `dtype`; `index` reads as
/// I64).
struct ManifestTensor {
  std::vector<int64_t> shape;
  DType type = DType::F32;
  /// Data inputs that index a table: values must lie in [0, indexBound) or
  /// equal indexIgnored (`index_bound`, `index_ignored`).
  std::optional<int64_t> indexBound, indexIgnored;
};

/// One argument or result of an entry point (its `index` is its position).
struct EntryValue {
  enum class Kind : uint8_t {
    Microbatch,
    Param,
    Input,
    Saved,
    Loss,
    Grad,
    Output,
    /// A value a split backward's input part returns for its weight part
    /// (`weight_saved`, contract version 2).
    WeightSaved,
    /// An evaluation metric a forward returns beside the loss (`metric`,
    /// ftpipe-model-gen --metrics), e.g. "correct_tokens".
    Metric
  };
  Kind kind = Kind::Param;
  /// Param, Grad: Hugging Face name; Input: the data input's name; Metric:
  /// the metric's name.
  std::string name;
  /// Saved: its index K among the forward's saved results; WeightSaved:
  /// among the input part's results for the weight part.
  int64_t saved = -1;
  /// Not written for a Microbatch (an index passed by value).
  ManifestTensor tensor;
};

struct ManifestTransfer {
  bool send = true;
  int64_t peer = 0, tag = 0;
  ManifestTensor tensor;
};

struct EntryPoint {
  /// Of a backward: the whole one, or a split backward's input or weight
  /// part (kinds `backward`, `backward_input`, `backward_weight`).
  enum class Part : uint8_t { Whole, Input, Weight };
  std::string name, symbol;
  int64_t device = 0, stage = 0;
  bool backward = false;
  std::vector<EntryValue> arguments, results;
  std::vector<ManifestTransfer> transfers;
  /// A backward's part (`kind`; Whole for a forward).
  Part part = Part::Whole;
};

/// One device (`devices[i]`): its artifact's file name and its stages.
struct ManifestDevice {
  int64_t id = 0;
  std::string artifact;
  std::vector<int64_t> stages;
};

struct ManifestStage {
  int64_t id = 0, device = 0;
  /// Names of the entry points (backward empty for a forward-only build;
  /// the split backward's parts, `backward_input` and `backward_weight`,
  /// empty for a stage that does not split).
  std::string forward, backward, backwardInput, backwardWeight;
  /// The positions of the stage's ops in the model function's body, the
  /// plan's nodes (`ops`, written as [begin, end) ranges, IndexRanges.h;
  /// empty when not
  /// recorded). Measured profiles (ProfileSchema.h) spread a stage's times
  /// over these ops.
  std::vector<int64_t> ops;
  /// Whether its backward recomputes its forward first (`recomputes`; not
  /// recorded: unknown).
  std::optional<bool> recomputes;
  /// The planner's time of one micro-batch's forward and backward (its
  /// recomputation included) on the stage's device, in ms (`forward_ms`,
  /// `backward_ms`; not recorded: unknown). With `ftpipe-compile --profile`
  /// they are priced with the measured costs: re-planning (Replan.h)
  /// compares plans with them.
  std::optional<double> forwardMs, backwardMs;
  /// Of backwardMs, the weight gradients' part (`backward_weight_ms`, the
  /// W of a split backward; not recorded: unknown): zb-auto's W cost.
  std::optional<double> weightMs;
  bool splits() const { return !backwardInput.empty(); }
  /// The name the stage lists for an entry point of `entry`'s kind.
  std::string &entryOf(const EntryPoint &entry);
  const std::string &entryOf(const EntryPoint &entry) const;
};

/// A tensor sent between devices (`tensors[i]`).
struct ManifestEdge {
  int64_t from = 0, to = 0, tag = 0;
  ManifestTensor tensor;
};

struct ManifestParameter {
  ManifestTensor tensor;
  /// Ascending; the first is the owner (`owner`, `copies`: fromJSON refuses
  /// an owner that is not the lowest, or a device listed twice).
  std::vector<int64_t> devices;
  /// Never trained (`frozen`, written only when true): no entry point
  /// returns its gradient and the runtime keeps no optimizer state for it.
  bool frozen = false;
};

/// A data input: its tensor and the devices whose entry points read it.
struct ManifestInput : ManifestTensor {
  std::vector<int64_t> devices;
};

/// The entry point whose result is the loss (`loss`).
struct ManifestLoss {
  int64_t device = 0, stage = 0, result = 0;
  std::string entry;
};

/// What the plan counted on a device and what it fixes (`device_memory[i]`).
struct ManifestDeviceMemory {
  int64_t device = 0;
  schedule::DeviceMemory counted;
  schedule::DeviceMemoryInputs inputs;
};

/// How ftpipe-compile made the plan (`compile`): the model file (an
/// absolute path) and its other arguments, without `-o` and `--profile`, so
/// that a run can compile the same model again with a measured profile
/// (`ftpipe-run --replan`).
struct ManifestCompile {
  std::string model;
  std::vector<std::string> arguments;
  /// Whether this compile partitioned the model (no plan in its IR, not
  /// forward-only; any method), so that the same command with
  /// `--replicas=auto` plans replicas (`plans_replicas`; freeze re-packing).
  bool plansReplicas = false;
};

/// The whole file. `compile`, `training`, `device_memory`, `replicas`,
/// `memory`, `tensors`, `loss` and the devices' `stages` are optional in the
/// file.
struct ManifestFile {
  std::string target;
  /// "host" or "cuda-device" (`memory`), empty when not recorded.
  std::string memory;
  std::vector<ManifestDevice> devices;
  std::vector<ManifestStage> stages;
  std::vector<int64_t> stageOrder;
  std::vector<EntryPoint> entryPoints;
  std::vector<ManifestEdge> tensors;
  std::map<std::string, ManifestParameter> parameters;
  std::map<std::string, ManifestInput> inputs;
  std::optional<ManifestLoss> loss;
  std::optional<schedule::TrainingSetup> training;
  std::vector<ManifestDeviceMemory> deviceMemory;
  /// Processes per device that ftpipe-run starts (`replicas`, one factor
  /// per device; schedule/Replicas.h), written only for a replicated plan.
  std::optional<schedule::ReplicaLayout> replicas;
  std::optional<ManifestCompile> compile;
};

/// An entry point's `kind`: forward, backward, backward_input or
/// backward_weight.
llvm::StringRef entryPointKind(const EntryPoint &entry);
/// Sets `entry`'s backward and part from `kind`; false for another name.
bool setEntryPointKind(EntryPoint &entry, llvm::StringRef kind);

llvm::json::Value toJSON(const ManifestTensor &tensor);
bool fromJSON(const llvm::json::Value &value, ManifestTensor &tensor,
              llvm::json::Path path);
llvm::json::Value toJSON(const EntryValue &value);
bool fromJSON(const llvm::json::Value &value, EntryValue &entry,
              llvm::json::Path path);
llvm::json::Value toJSON(const ManifestTransfer &transfer);
bool fromJSON(const llvm::json::Value &value, ManifestTransfer &transfer,
              llvm::json::Path path);
llvm::json::Value toJSON(const EntryPoint &entry);
bool fromJSON(const llvm::json::Value &value, EntryPoint &entry,
              llvm::json::Path path);
llvm::json::Value toJSON(const ManifestDevice &device);
bool fromJSON(const llvm::json::Value &value, ManifestDevice &device,
              llvm::json::Path path);
llvm::json::Value toJSON(const ManifestStage &stage);
bool fromJSON(const llvm::json::Value &value, ManifestStage &stage,
              llvm::json::Path path);
llvm::json::Value toJSON(const ManifestEdge &edge);
bool fromJSON(const llvm::json::Value &value, ManifestEdge &edge,
              llvm::json::Path path);
llvm::json::Value toJSON(const ManifestParameter &parameter);
bool fromJSON(const llvm::json::Value &value, ManifestParameter &parameter,
              llvm::json::Path path);
llvm::json::Value toJSON(const ManifestInput &input);
bool fromJSON(const llvm::json::Value &value, ManifestInput &input,
              llvm::json::Path path);
llvm::json::Value toJSON(const ManifestLoss &loss);
bool fromJSON(const llvm::json::Value &value, ManifestLoss &loss,
              llvm::json::Path path);
llvm::json::Value toJSON(const ManifestCompile &compile);
bool fromJSON(const llvm::json::Value &value, ManifestCompile &compile,
              llvm::json::Path path);
llvm::json::Value toJSON(const ManifestDeviceMemory &memory);
bool fromJSON(const llvm::json::Value &value, ManifestDeviceMemory &memory,
              llvm::json::Path path);
/// Writes `format` and `version` too; fromJSON refuses another format or
/// version.
llvm::json::Value toJSON(const ManifestFile &file);
bool fromJSON(const llvm::json::Value &value, ManifestFile &file,
              llvm::json::Path path);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_MANIFESTSCHEMA_H
