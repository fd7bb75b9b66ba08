//===- FreezeRecompile.h - Compiling again when a run freezes more -*- C++
//-*-===//
//
// `ftpipe-run --freeze ... --freeze-recompile`: when the freeze policy
// (RunFreezing.h) freezes more than the running plan's manifest does,
// device 0 compiles the model again with the frozen set (`ftpipe-compile
// --freeze=@FILE`, the rest of the command the manifest records) in a child
// process while training goes on with the code compiled before, and when it
// is ready every device migrates to it at a step boundary (Migration.h), so
// the backward of the frozen prefix is no longer computed at all and the
// planner re-balances the stages for the active part. The devices' loop is
// runReplanning (lib/Runtime/RunDevices.cpp), shared with --replan; this
// file is device 0's side of it. docs/Freezing.md says what is guaranteed.
// No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_FREEZERECOMPILE_H
#define FTPIPE_RUNTIME_FREEZERECOMPILE_H

#include "FTPipe/Runtime/Replan.h"

#include <functional>
#include <optional>
#include <set>
#include <string>

namespace ftpipe {
namespace runtime {

/// `command` (a manifest's `compile`) freezing the parameters named in
/// `namesFile` instead of what it froze: its --freeze removed,
/// `--freeze=@namesFile` added, `--replicas=auto` where `repack` (re-packing:
/// the planner may give the devices the frozen prefix frees to replicas),
/// then `extra` (ftpipe-compile arguments separated by spaces,
/// --freeze-recompile-args; a later flag wins, so `--replicas=none` there
/// keeps the plans unreplicated).
ManifestCompile freezeCommand(const ManifestCompile &command,
                              llvm::StringRef namesFile, llvm::StringRef extra,
                              bool repack);

/// Whether compiling again pays, and why (one line for a person).
struct RecompilePrice {
  bool pays = true;
  std::string why;
};

/// Prices a freeze re-compile of `manifest`'s plan (run with `config` on
/// `processes` processes over `cores` cores) with `frozen` frozen and
/// `remainingSteps` steps left: the step it runs now, the frozen prefix's
/// backwards skipped (SkippedBackwards.h; the manifest's stage times with
/// those backwards at zero, as predictStep prices them), against the best a
/// re-compile could do, the same work spread evenly over the devices with
/// no bubble; on a host with fewer cores than processes both are at least
/// the work over the cores (the devices' idle time is the others' compute).
/// It pays when that saving over the remaining steps exceeds
/// `compileCpuSeconds`, the last compile's CPU time; with none measured
/// yet, or a plan without stage times, it is taken as paying.
RecompilePrice priceFreezeRecompile(const ArtifactManifest &manifest,
                                    const schedule::ScheduleConfig &config,
                                    const std::set<std::string> &frozen,
                                    int64_t remainingSteps,
                                    std::optional<double> compileCpuSeconds,
                                    int64_t processes, int64_t cores);

/// Device 0's side of --freeze-recompile: the compile in flight and the
/// decisions, said in lines for a person (`note`). Every call comes at a
/// step boundary, after `updates` steps.
class FreezeRecompiler {
public:
  struct Setup {
    /// Where the frozen-name files and the plans go (created when first
    /// needed; empty: a new temporary directory) and the compiler to start.
    std::string directory, compiler;
    bool allowOverBudget = false;
    /// Tests: wait for a compile at the step after it started, so that the
    /// migration's step does not depend on the machine's speed.
    bool waitForCompile = false;
    /// --freeze-recompile-args (freezeCommand).
    std::string extraArguments;
    /// Whether the run may move to a plan with replicas (MPI processes).
    bool replicasAllowed = false;
    /// Whether re-compiles of a plan ftpipe-compile partitioned re-pack
    /// (freezeCommand; the manifest's `compile.plans_replicas`): MPI
    /// processes under GPipe or 1F1B, the schedules that move to replicas.
    bool repack = false;
    /// The run's processes and the host's cores (priceFreezeRecompile).
    int64_t processes = 1, cores = 1;
    std::function<void(const std::string &)> note;
  };
  explicit FreezeRecompiler(Setup setup) : setup(std::move(setup)) {}
  ~FreezeRecompiler() { finish(); }

  /// After a step of `current` (run as `replicas` with `config`), the run
  /// freezing
  /// `frozen` (`depth` of `layers` layers) from the next step on: when a
  /// compile finished, proposes to migrate to its plan (when planMigration
  /// and checkFrozenAtMigration accept it); else, when `frozen` has more
  /// than the plan's frozen parameters and than the last compile froze,
  /// starts a compile with `frozen` if it pays (priceFreezeRecompile).
  ReplanControl afterStep(int64_t updates, const std::set<std::string> &frozen,
                          uint32_t depth, size_t layers,
                          const PipelineModel &current,
                          const schedule::ReplicaLayout &replicas,
                          const ExecutorConfig &config);
  /// After a Migrate: the run took the plan afterStep proposed.
  void migrated(int64_t updates);
  /// Stops a compile still running (the end of the run).
  void finish();

private:
  Setup setup;
  int64_t compiles = 0;
  std::optional<PlanCompile> compile;
  /// How many parameters the last compile froze (or the last decision
  /// not to compile saw frozen), and its CPU time.
  size_t compiledFrozen = 0;
  std::optional<double> compileCpuSeconds;
  double decidedAt = 0;
  std::string prefix() const;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_FREEZERECOMPILE_H
