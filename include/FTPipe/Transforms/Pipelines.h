//===- Pipelines.h - FTPipe's pass pipelines --------------------*- C++ -*-===//
//
// The partitioning pipelines as code, for compilers that embed FTPipe: an
// options struct with typed fields per pipeline, a builder that appends the
// passes to a caller's pass manager (so a host compiler composes FTPipe with
// its own passes without going through strings), and the registration of the
// same pipelines under a name for textual pipelines and ftpipe-opt.
//
// Every builder expects a pass manager nested on `builtin.module` (the FTPipe
// partitioning passes run on the module: it carries the hardware and the
// plan). Each phase remains available as its own pass (Passes.h).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_TRANSFORMS_PIPELINES_H
#define FTPIPE_TRANSFORMS_PIPELINES_H

#include "FTPipe/Transforms/Passes.h"

#include "mlir/Pass/PassOptions.h"

#include <string>
#include <vector>

namespace mlir {
class OpPassManager;

namespace ftpipe {

/// Which partitioner ends the partitioning pipeline.
enum class PartitionMethod {
  /// Runs every partitioner, keeps the fastest feasible plan
  /// (ftpipe-auto-partition).
  Auto,
  /// Mixed-Pipe, best L in {P, 2P, 3P, 4P} (ftpipe-mixed-pipe).
  MixedPipe,
  /// Contiguous stages, exact dynamic programming (ftpipe-seq-pipe, dp).
  SeqDP,
  /// Contiguous stages, greedy cuts (ftpipe-seq-pipe, greedy).
  SeqGreedy,
};

/// Options of the partitioning pipeline: ftpipe-annotate-costs, then the
/// partitioner that `method` names. Defaults are the passes' defaults.
struct PartitionPipelineOptions {
  /// Hardware preset name or cluster JSON file (default
  /// "rtx2080ti-pcie-x8", FTPipe's testbed).
  std::string hardware = AnnotateCostsPassOptions().hardware;
  /// Measured profile (JSON) that overrides the analytical op times; empty
  /// for none.
  std::string profile;
  /// Plan for the first `devices` devices of the hardware (0: all).
  unsigned devices = 0;
  /// Model function (empty: the only function with a body).
  std::string function;
  /// The partitioner.
  PartitionMethod method = PartitionMethod::Auto;
  /// None; auto: also choose the pipeline depth x data-parallel replicas
  /// of the devices; W: W identical pipelines of depth devices / W;
  /// r0,r1,...: that layout, one factor per plan device (method
  /// Auto: over every partitioner's plans, ftpipe-auto-partition's
  /// `replicas`; the others over their own, their pass's `replicas`).
  ReplicasOption replicas = ReplicasOption::none();
  /// Auto only: the largest graph on which Seq-Pipe dp is tried.
  unsigned dpMaxOps = AutoPartitionPassOptions().dpMaxOps;
  /// Auto: do not print the candidates; MixedPipe and the Seq-Pipe ones: the
  /// opposite of verbose.
  /// Library users usually want no output on stderr, hence the default.
  bool quiet = true;
  /// The training setup plans are scored for (the `ObjectiveOptions` every
  /// scoring pass takes; the defaults are the passes' own).
  ::ftpipe::schedule::TrainingSetup setup;
  /// Auto and MixedPipe: the synchronous schedule whose simulated step
  /// chooses among candidate plans (the passes' sync-schedule; Async: none).
  ::ftpipe::schedule::Kind syncSchedule =
      AutoPartitionPassOptions().syncSchedule;
};

/// Options of the Mixed-Pipe pipeline: ftpipe-annotate-costs, then either
/// the search over L (ftpipe-mixed-pipe) or the three phases with a fixed L
/// (ftpipe-coarsen, ftpipe-assign-devices, ftpipe-refine).
struct MixedPipeOptions {
  /// As in PartitionPipelineOptions.
  std::string hardware = AnnotateCostsPassOptions().hardware;
  std::string profile;
  unsigned devices = 0;
  std::string function;
  /// Number of blocks L that coarsening leaves. 0 searches L in {P, 2P, 3P,
  /// 4P} and keeps the best plan (ftpipe-mixed-pipe); any other value runs
  /// the three phases as separate passes with that L.
  unsigned stages = 0;
  /// Fixed L only: module types whose instances become one block each
  /// (empty: the coarsening pass's defaults).
  std::vector<std::string> blockTypes;
  /// Fixed L only: run the refinement phase (off for ablations).
  bool refine = true;
  /// Search only: print every candidate L on stderr.
  bool verbose = false;
  /// The training setup plans are scored for (the `ObjectiveOptions` every
  /// scoring pass takes; the defaults are the passes' own).
  ::ftpipe::schedule::TrainingSetup setup;
};

/// Appends the partitioning pipeline to `pm` (nested on builtin.module):
/// cost annotation for `options.hardware`, then the chosen partitioner. On
/// success every op of the model function carries `ftpipe.stage` and the
/// module carries `ftpipe.hardware` and `ftpipe.plan`.
void buildPartitionPipeline(OpPassManager &pm,
                            const PartitionPipelineOptions &options);

/// Appends the Mixed-Pipe pipeline to `pm` (nested on builtin.module). Same
/// result attributes as buildPartitionPipeline; with a fixed L every op also
/// keeps its coarse block id (`ftpipe.block`).
void buildMixedPipePipeline(OpPassManager &pm, const MixedPipeOptions &options);

/// Appends the stage-program pipeline to `pm` (nested on builtin.module):
/// the partitioning pipeline, then ftpipe-outline-stages,
/// ftpipe-differentiate and ftpipe-split-devices. The result is the
/// per-device IR of docs/StagePrograms.md. Recomputation follows
/// `options.setup.recompute` (auto: each stage as the plan decided).
void buildStageProgramsPipeline(OpPassManager &pm,
                                const PartitionPipelineOptions &options);

/// Appends only the three stage-program passes, for a module that is already
/// partitioned (`function`: the model function, empty to find it), after
/// ftpipe-clamp-gather-indices unless `indexGuards` is false (ftpipe-compile
/// --index-guards=false, to measure the guards' cost).
void buildStageProgramPasses(OpPassManager &pm,
                             ::ftpipe::schedule::RecomputeMode recompute,
                             StringRef function = "", bool indexGuards = true);

//===----------------------------------------------------------------------===//
// Textual forms, for PassPipelineRegistration and `--pass-pipeline`
//===----------------------------------------------------------------------===//

/// The options both pipelines' command-line forms take: the problem
/// (hardware, profile, devices, function) and the fine-tuning setup (CRTP
/// over MLIR's PassPipelineOptions).
template <typename Derived>
struct CommonTextOptions : public PassPipelineOptions<Derived> {
  using PassOptions = ::mlir::detail::PassOptions;
  PassOptions::Option<std::string> hardware{
      *this, "hardware",
      llvm::cl::desc("Hardware preset name or cluster JSON file"),
      llvm::cl::init(PartitionPipelineOptions().hardware)};
  PassOptions::Option<std::string> profile{
      *this, "profile",
      llvm::cl::desc(
          "Measured profile (JSON) that overrides analytical times")};
  PassOptions::Option<unsigned> devices{
      *this, "devices",
      llvm::cl::desc("Plan for the first P devices of the hardware (0: all)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> function{
      *this, "function",
      llvm::cl::desc("Model function (default: the only one with a body)")};
  PassOptions::Option<::ftpipe::schedule::Kind> schedule{
      *this, "schedule", llvm::cl::desc("Pipeline schedule"),
      llvm::cl::init(::ftpipe::schedule::TrainingSetup().schedule),
      scheduleOptionValues()};
  PassOptions::Option<::ftpipe::schedule::Optimizer> optimizer{
      *this, "optimizer", llvm::cl::desc("Optimizer whose state is kept"),
      llvm::cl::init(::ftpipe::schedule::TrainingSetup().optimizer),
      optimizerOptionValues()};
  PassOptions::Option<::ftpipe::schedule::WeightVersions> stashing{
      *this, "stashing",
      llvm::cl::desc("Weight versions of the async schedule"),
      llvm::cl::init(::ftpipe::schedule::TrainingSetup().weightVersions),
      weightVersionsOptionValues()};
  PassOptions::Option<::ftpipe::schedule::RecomputeMode> recompute{
      *this, "recompute",
      llvm::cl::desc("Stages that recompute the forward before the backward"),
      llvm::cl::init(::ftpipe::schedule::TrainingSetup().recompute),
      recomputeModeOptionValues()};
  PassOptions::Option<unsigned> microbatches{
      *this, "microbatches",
      llvm::cl::desc("Micro-batches per mini-batch (GPipe and 1F1B)"),
      llvm::cl::init(::ftpipe::schedule::TrainingSetup().microBatches)};
};

/// Command-line form of PartitionPipelineOptions
/// (`ftpipe-partition-pipeline{hardware=... devices=4 method=mixed-pipe}`).
struct PartitionPipelineTextOptions
    : public CommonTextOptions<PartitionPipelineTextOptions> {
  PassOptions::Option<PartitionMethod> method{
      *this, "method", llvm::cl::desc("Partitioner"),
      llvm::cl::init(PartitionMethod::Auto),
      llvm::cl::values(
          clEnumValN(PartitionMethod::Auto, "auto",
                     "every partitioner, the fastest feasible plan"),
          clEnumValN(PartitionMethod::MixedPipe, "mixed-pipe",
                     "Mixed-Pipe, best L in {P..4P}"),
          clEnumValN(PartitionMethod::SeqDP, "seq-dp",
                     "contiguous stages, exact dynamic programming"),
          clEnumValN(PartitionMethod::SeqGreedy, "seq-greedy",
                     "contiguous stages, greedy cuts"))};
  PassOptions::Option<ReplicasOption> replicas{
      *this, "replicas",
      llvm::cl::desc("none; auto: also choose the pipeline depth x "
                     "data-parallel replicas; W: W identical pipelines of "
                     "depth devices / W; r0,r1,...: that layout, one factor "
                     "per plan device (method auto: over every "
                     "partitioner's plans; the others: their own)"),
      llvm::cl::init(ReplicasOption::none())};
  PassOptions::Option<unsigned> dpMaxOps{
      *this, "dp-max-ops",
      llvm::cl::desc("auto: largest graph on which Seq-Pipe dp is tried"),
      llvm::cl::init(PartitionPipelineOptions().dpMaxOps)};
  PassOptions::Option<bool> quiet{
      *this, "quiet", llvm::cl::desc("Print no candidates on stderr"),
      llvm::cl::init(true)};
  PassOptions::Option<::ftpipe::schedule::Kind> syncSchedule{
      *this, "sync-schedule",
      llvm::cl::desc("auto, mixed-pipe: synchronous schedule whose simulated "
                     "step chooses among candidate plans (none: 'schedule' "
                     "decides)"),
      llvm::cl::init(PartitionPipelineOptions().syncSchedule),
      syncScheduleOptionValues()};

  /// The typed options these flags spell.
  PartitionPipelineOptions toOptions() const;
};

/// Command-line form of MixedPipeOptions (`ftpipe-mixed-pipe-pipeline{...}`);
/// the shared options come from CommonTextOptions.
struct MixedPipeTextOptions : public CommonTextOptions<MixedPipeTextOptions> {
  PassOptions::Option<unsigned> stages{
      *this, "stages",
      llvm::cl::desc("Blocks L after coarsening (0: search L in {P..4P})"),
      llvm::cl::init(0)};
  PassOptions::ListOption<std::string> blockTypes{
      *this, "block-types",
      llvm::cl::desc("Fixed L: module types that become one block each")};
  PassOptions::Option<bool> refine{
      *this, "refine", llvm::cl::desc("Fixed L: run the refinement phase"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> verbose{
      *this, "verbose", llvm::cl::desc("Search: print every candidate L"),
      llvm::cl::init(false)};

  /// The typed options these flags spell.
  MixedPipeOptions toOptions() const;
};

/// Registers the named pipelines `ftpipe-partition-pipeline`,
/// `ftpipe-mixed-pipe-pipeline` and `ftpipe-stage-programs-pipeline` with
/// MLIR's global pass registry, so that
/// `--pass-pipeline` strings and `parsePassPipeline` can name them. Call once,
/// before parsing pipelines (ftpipe-opt does).
void registerFTPipePipelines();

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_TRANSFORMS_PIPELINES_H
