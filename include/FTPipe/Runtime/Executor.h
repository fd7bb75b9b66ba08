//===- Executor.h - Runs one device's part of a training run ----*- C++ -*-===//
//
// A DeviceExecutor runs a device's action list (lib/Schedule) with the
// device's stage programs: forwards and backwards of micro-batches (their
// transfers go through the communicator, the calling thread's Transport),
// gradient accumulation over the micro-batches of a step (mean: the sum
// times 1/M), and at each update the tied-parameter exchange (copies send
// their gradient to the owner, the owner adds them to its own, updates and
// sends the new value back) and the optimizer step of the parameters it
// owns. A replicated device (its communicator a ReplicaCommunicator,
// Replicas.h) first sums its replicas' gradients, and its tied exchange
// addresses replicas. Weight versions: with stashing, a micro-batch's
// backward uses the weights its forward used (older versions kept in a
// bounded store; 2BW allows two versions in all); without, the current
// weights.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_EXECUTOR_H
#define FTPIPE_RUNTIME_EXECUTOR_H

#include "FTPipe/Runtime/ActivationCache.h"
#include "FTPipe/Runtime/Communicator.h"
#include "FTPipe/Runtime/EvaluationMetrics.h"
#include "FTPipe/Runtime/MemoryStats.h"
#include "FTPipe/Runtime/Optimizer.h"
#include "FTPipe/Runtime/SkippedBackwards.h"
#include "FTPipe/Runtime/StageProgram.h"
#include "FTPipe/Schedule/Schedule.h"

#include "llvm/Support/JSON.h"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <tuple>

namespace ftpipe {
namespace runtime {

/// Tensors by name (weights, data sets).
using TensorMap = std::map<std::string, Tensor>;

/// Per parameter name, the devices whose stages read it, ascending; the
/// first is the owner (docs/StagePrograms.md).
using ParameterPlacement = std::map<std::string, std::vector<int64_t>>;

struct ExecutorConfig {
  schedule::ScheduleConfig schedule;
  schedule::WeightVersions stashing = schedule::WeightVersions::None;
  OptimizerConfig optimizer;
  /// Tests and demonstrations (ftpipe-run --debug-slow): every stage call
  /// of this device takes this many times its time, by sleeping for
  /// (slowdown - 1) times what the call computed (counted as compute).
  double slowdown = 1;
  /// Parameters never trained (the manifest's `frozen`): no gradient sums,
  /// no optimizer state, no stashed versions; their weights stay as set.
  std::set<std::string> frozen;
  /// Report each step's gradient sum of squares per parameter
  /// (StepReport::gradientSquares; --freeze gradient-norm).
  bool gradientSquares = false;
};

/// What one device measured in one step (reported at its update).
struct StepReport {
  int64_t step = 0;
  /// Mean loss of the step's micro-batches, on a device that computes it.
  std::optional<double> loss;
  /// Wall time since the previous update (or the start), and the part of it
  /// spent in stage forwards and backwards, not counting the time their
  /// receives waited for a message.
  double seconds = 0, computeSeconds = 0;
  /// With ExecutorConfig::gradientSquares: per parameter this device owns
  /// and trains, the sum of squares of the step's gradient (as the
  /// optimizer takes it).
  std::map<std::string, double> gradientSquares;
};

/// Checks a data set against the stages' data inputs: every input present,
/// same element type, a leading sample dimension then the micro-batch
/// slice's shape without its first dimension, and (unless `allowExtra`, as
/// for a device that reads only some of the inputs) no other tensor. The
/// message names what differs.
llvm::Error validateDataset(const std::vector<DataInputInfo> &inputs,
                            const TensorMap &dataset, bool allowExtra = false);

/// Checks weights against the parameters: missing, extra and mis-shaped
/// tensors are refused by name.
llvm::Error validateWeights(const std::vector<ParameterInfo> &params,
                            const TensorMap &weights);

/// One action as it ran, in seconds from the start of run().
struct TraceEvent {
  schedule::Action action;
  double startSeconds = 0, endSeconds = 0;
  /// Forward and backward: the part spent in the stage's code, not waiting
  /// for a message; and the part spent waiting.
  double computeSeconds = 0, waitSeconds = 0;
  /// Not an action: the run moved to another plan after update
  /// `action.index` (Migration.h), in this interval.
  bool migration = false;
  /// A backward (or its I or W part) skipped: the stage is in a frozen
  /// prefix's closure (SkippedBackwards.h).
  bool skipped = false;
  /// The CPU time of the device's thread during the action (its code, the
  /// polls of its waits, the update): unlike the times above it leaves out
  /// the time the thread waited for a core, so it holds on a loaded machine.
  /// A forward or backward of a device slowed on purpose counts the factor.
  double cpuSeconds = 0;
};

/// Per device its events, as a Chrome / Perfetto trace in the format of the
/// simulator's (lib/Partition, simulationToChromeTrace): one track per
/// device, a complete event per action named "F s2 mb5", "B s2 mb5" or
/// "U1", stage and micro-batch in `args` (and `skipped` for a skipped
/// backward) with the time in stage code, waiting and on the CPU
/// (`compute_ms`, `wait_ms`, `cpu_ms`), times in microseconds; a track's
/// k-th migration gets `migrations[k]` (why it moved) as its `why`.
llvm::json::Value
traceToChrome(const std::vector<std::vector<TraceEvent>> &perDevice,
              llvm::ArrayRef<std::string> migrations = {});

class ReplicaReductions;

class DeviceExecutor {
public:
  DeviceExecutor(Communicator &communicator, std::vector<StageProgram *> stages,
                 ParameterPlacement placement, ExecutorConfig config);
  ~DeviceExecutor();

  /// The parameters of this device's stages (each name once).
  const std::vector<ParameterInfo> &parameters() const { return params; }
  /// The data inputs of this device's stages (each name once).
  const std::vector<DataInputInfo> &dataInputs() const { return inputs; }

  /// Initial weights: exactly the device's parameters (validateWeights).
  llvm::Error setWeights(TensorMap weights);
  /// The data set (validateDataset). Micro-batch m reads samples
  /// m * b + i (modulo the set's size) for i < b, the micro-batch size.
  llvm::Error setData(const TensorMap &dataset);

  /// Runs this device's list (its part of a dry-run-checked schedule) on the
  /// calling thread, which it makes the communicator's. Calls `onStep` after
  /// each update.
  llvm::Error run(llvm::ArrayRef<schedule::Action> actions,
                  const std::function<void(const StepReport &)> &onStep = {});

  /// Forward passes only (Evaluation.cpp): runs `forwards`, this device's
  /// forward actions of a forward-only list (forwardOnlyList), on
  /// `dataset` (checked as setData checks) with the live weights, keeping
  /// nothing for a backward. Returns the losses this device computed, with
  /// the metrics returned beside them, one per micro-batch, in order (none
  /// on a device without the loss stage).
  /// Every device calls it at the same point: before run(), or from
  /// run()'s `onStep` at an update that no micro-batch is in flight across
  /// (schedules that flush at every step); the step's time and idle share
  /// do not count it.
  llvm::Expected<std::vector<EvaluatedMicroBatch>>
  evaluate(llvm::ArrayRef<schedule::Action> forwards, const TensorMap &dataset);

  const TensorMap &weights() const { return live; }
  /// Updates done: the live weights' version.
  int64_t updates() const { return version; }
  /// Whether this device owns parameter `name` (updates it, Executor.h).
  bool owns(llvm::StringRef name) const;
  /// Freezes `names` (ExecutorConfig::frozen) from now on: call at a step
  /// boundary. A parameter frozen later keeps its optimizer state unused.
  void setFrozen(std::set<std::string> names) {
    config.frozen = std::move(names);
  }
  const std::set<std::string> &frozen() const { return config.frozen; }
  /// Replays the cached stages' forwards from `use`'s cache where it holds
  /// the micro-batch's samples, and skips their backwards
  /// (ActivationCache.h; ExecutorActivationCache.cpp). Call at a step
  /// boundary.
  void setActivationCache(ActivationCacheUse use) {
    activationCache = std::move(use);
  }
  /// Skips the backwards of a frozen prefix's stages and drops the sends
  /// other backwards address to them (SkippedBackwards.h). Call at a step
  /// boundary, with the frozen set in force.
  void setSkippedBackwards(SkippedBackwards skip) { skipped = std::move(skip); }
  /// Whether parameter `name` is frozen (ExecutorConfig::frozen).
  bool isFrozen(llvm::StringRef name) const {
    return config.frozen.count(name.str()) != 0;
  }
  /// The optimizer state of the parameters this device owns, as
  /// Optimizer::saveState names it (what a checkpoint keeps).
  TensorMap optimizerState() const;
  /// Continues a run after `updates` updates (a checkpoint's): the weights'
  /// version, the optimizer's count and the owned parameters' optimizer
  /// state (as optimizerState() gave it; nothing missing, nothing extra).
  /// The actions then run are the rest of the run, their micro-batches and
  /// updates counted from the start of the run as before.
  llvm::Error resume(int64_t updates, const TensorMap &optimizerState);
  /// Record every action's start and end during run().
  void recordTrace(bool on) { tracing = on; }
  const std::vector<TraceEvent> &trace() const { return events; }
  /// Most weight versions held at once during run().
  int64_t peakVersions() const { return peakVersionCount; }
  /// The device's tensor memory: its ledger's peak (weights adopted by
  /// setWeights and everything run() allocates are charged to the device)
  /// and the action that reached it.
  DeviceMemory memory() const;
  /// The peak of memory() that running `actions` (this device's list) will
  /// reach: what the executor keeps between actions (weights, the step's
  /// gradient sums, optimizer state, weight versions, saved values), what
  /// each action adds while it runs, messages in flight (each action's sends
  /// until `sendsHeldUntil`, schedule::sendsHeldUntil of the lists `actions`
  /// is one of), and the generated code's buffers with the allocator's cache
  /// (the recorded peak of the entry point a task calls; at an update, what
  /// the task before it left). None when a stage's memory needs are unknown
  /// (StageProgram::memory).
  std::optional<MemoryPrediction>
  predictMemory(llvm::ArrayRef<schedule::Action> actions,
                llvm::ArrayRef<size_t> sendsHeldUntil) const;
  /// From now on each action of `actions` (this device's list) bounds the
  /// generated code's buffers and the allocator's cache by its entry of
  /// `bounds` (MemoryPrediction::cacheBounds of the same list), updates
  /// included, so that the cache keeps what the prediction's peak leaves
  /// room for; an action not in `actions` by the recorded peak of the entry
  /// point it calls (an update: as the task before it left it).
  void boundCaches(llvm::ArrayRef<schedule::Action> actions,
                   llvm::ArrayRef<int64_t> bounds);

private:
  llvm::Error forward(int64_t stage, int64_t mb);
  llvm::Error backward(int64_t stage, int64_t mb);
  /// The forward of a stage the activation cache covers: replayed on a hit,
  /// else run with its replayed sends recorded.
  llvm::Error cachedForward(StageProgram &stage, int64_t mb);
  /// A split backward's parts (ExecutorSplitBackward.cpp): I keeps what its
  /// W reads until the W runs.
  llvm::Error inputBackward(int64_t stage, int64_t mb);
  llvm::Error weightBackward(int64_t stage, int64_t mb);
  /// Runs a stage's code, counting its time as compute but for the time its
  /// receives waited (and stretching it by config.slowdown).
  void timed(llvm::function_ref<void()> code);
  /// Bounds the allocator's cache for `action` (boundCaches).
  void limitCache(const schedule::Action &action);
  /// boundCaches' bounds, by action (kind, stage, index).
  std::map<std::tuple<schedule::ActionKind, int64_t, int64_t>, int64_t>
      cacheBounds;
  /// Over a ReplicaCommunicator with replicas: plans the stages'
  /// all-reduces of `actions` (ReplicaReductions).
  void startReductions(llvm::ArrayRef<schedule::Action> actions);
  llvm::Error update(int64_t k,
                     const std::function<void(const StepReport &)> &onStep);
  StageProgram *program(int64_t stage) const;
  /// What the runtime holds now, by purpose.
  HeldBytes held() const;
  /// The weights of `stage`'s parameters from `weights` (a frozen one, which
  /// has no older version, from the live weights).
  std::vector<const Tensor *> paramsOf(const StageProgram &stage,
                                       const TensorMap &weights) const;
  /// Where `stage`'s gradients add up in `sums`, one per parameter (null
  /// for a frozen one: no entry point returns its gradient).
  std::vector<Tensor *> gradientSumsOf(const StageProgram &stage,
                                       TensorMap &sums) const;
  /// The live weights of the trained parameters (a stashed version).
  TensorMap trainedWeights() const;
  std::vector<const Tensor *> dataOf(const StageProgram &stage, int64_t mb,
                                     std::vector<Tensor> &storage) const;
  /// Runs `code` (a backward or its input part of `stage`'s micro-batch
  /// `mb`) without the sends SkippedBackwards drops.
  void withoutDroppedSends(int64_t stage, int64_t mb,
                           llvm::function_ref<void()> code);
  ActivationCacheUse activationCache;
  SkippedBackwards skipped;

  Communicator &communicator;
  std::vector<StageProgram *> stages;
  ParameterPlacement placement;
  ExecutorConfig config;
  Optimizer optimizer;
  std::vector<ParameterInfo> params;
  std::vector<DataInputInfo> inputs;

  TensorMap live;
  /// Per step, the sum of its micro-batches' gradients so far (an async
  /// schedule may run backwards of the next step before this one's update).
  std::map<int64_t, TensorMap> gradients;
  /// A zero gradient for every trained parameter.
  TensorMap zeroGradients() const;
  const TensorMap *dataset = nullptr;
  /// Updates done: the live weights' version.
  int64_t version = 0;
  /// Older versions still used by micro-batches in flight.
  std::map<int64_t, TensorMap> stashed;
  int64_t peakVersionCount = 1;
  struct InFlight {
    int64_t version;
    std::vector<Tensor> saved;
  };
  using KeptValues = std::map<std::pair<int64_t, int64_t>, InFlight>;
  KeptValues inFlight;
  /// Per (stage, micro-batch) whose input part ran and weight part did not:
  /// what the weight part reads (the weights' version in `version`).
  KeptValues waitingWeight;
  /// The program of `stage` and what `table` holds of its micro-batch `mb`
  /// (inFlight or waitingWeight), or the error that this device runs
  /// `action` ("the backward") of it before its `before` ("forward").
  llvm::Expected<std::pair<StageProgram *, KeptValues::iterator>>
  kept(KeptValues &table, int64_t stage, int64_t mb, llvm::StringRef action,
       llvm::StringRef before);
  /// Where a backward of micro-batch `mb` adds `stage`'s parameter
  /// gradients (in parameters() order): its step's sums, zero at first.
  std::vector<Tensor *> gradientSums(const StageProgram &stage, int64_t mb);
  /// Losses of the micro-batches of each step not yet reported.
  std::map<int64_t, std::vector<double>> stepLosses;
  double computeSeconds = 0, stepStart = 0;
  /// Seconds the stages' receives waited, over the whole run.
  double waitedSeconds = 0;
  bool tracing = false;
  std::vector<TraceEvent> events;
  /// During evaluate(): forwards keep their losses and metrics here and
  /// save nothing.
  bool evaluating = false;
  std::vector<EvaluatedMicroBatch> evaluated;
  /// The ledger's peak as last seen, the action that reached it and what
  /// was held when that action began.
  int64_t seenPeak = 0;
  std::string peakAction;
  HeldBytes heldAtPeak;
  /// Forwards transfers to the communicator, timing the receives.
  class WaitTimer;
  std::unique_ptr<WaitTimer> waitTimer;
  /// A replicated device's gradient all-reduces, stage by stage (made at
  /// the first run over a ReplicaCommunicator with replicas).
  std::unique_ptr<ReplicaReductions> reductions;
  /// waitTimer as the Transport it is.
  Transport *timedTransport() const;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_EXECUTOR_H
