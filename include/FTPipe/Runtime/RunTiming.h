//===- RunTiming.h - A measured run against the simulator -------*- C++ -*-===//
//
// What a run's timelines (every device's TraceEvents) say, and what
// lib/Partition's simulator predicts for the same run: the same action lists
// (SimulatorConfig::deviceOrders) with per-stage forward and backward times
// measured in the run (the median over its micro-batches of the time spent
// in the stage's code, waits for messages excluded) plus what its receives
// cost it (receiveOverheadMs): the part of its waits that its senders' tasks
// do not explain. A sender's copy into its message runs in its stage code,
// so its cost holds it; the rest of a transfer (transport, the receiver's
// copy, its waking from a poll) holds up the receiver, whether the message
// came before it waited or while it did, so it is the receiver's. The
// simulation with the stage code alone (free transfers) is printed beside
// it. A replicated run's gradient all-reduces are free,
// or, given the ring link rate of the processes' all-reduce
// (ftpipe-bench-allreduce), priced as the planner prices them: each stage's
// gradient bytes, ring all-reduced over its device's replicas when its last
// backward has ended. Each process's updates take, in the simulation, the
// mean CPU time of its measured updates (the optimizer step and gradient
// sums; a process waiting in an update sleeps, and what it waits for, other
// processes and all-reduces, the simulation runs itself). The runtime's own
// overhead is the time a device spends neither in stage code nor waiting for a
// message: optimizer updates (and their tied-gradient exchange) and bookkeeping
// (data slices, gradient sums, copies of results, the loop between actions).
//
// Processes (or a process's device threads) that share a node's cores with
// more of them than it has (4 MPI processes on 2 cores) are simulated
// sharing them (schedule::SharedCores: each of k tasks at once runs at C / k
// of its speed), with each task's CPU time as its cost: its wall time
// already holds the waits for a core that the sharing then models, and its
// CPU time its receives' own work (their copies and polls).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_RUNTIMING_H
#define FTPIPE_RUNTIME_RUNTIMING_H

#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Schedule/Replicas.h"
#include "FTPipe/Schedule/Simulator.h"

#include <cstdint>
#include <string>

namespace ftpipe {
namespace runtime {

/// Where a process computes: its host and the CPUs its affinity allows (a
/// fixed-size record, gathered from every process as its bytes).
struct ProcessCpus {
  char host[64] = {};
  /// Bit c of cpus[c / 64]: CPU c.
  uint64_t cpus[16] = {};

  /// This process's host name and affinity.
  static ProcessCpus current();
  /// Its CPUs.
  int64_t count() const;
};

/// The nodes of processes that share cores: processes on one host whose
/// CPUs overlap (directly or through others) are a node, whose cores are
/// their CPUs together. Exact when the processes of a host are bound to
/// disjoint CPU sets or all to the same one (mpirun binds 2 processes to a
/// core each, more to the socket); for partial overlaps it takes the union.
schedule::SharedCores sharedCoresOf(llvm::ArrayRef<ProcessCpus> processes);

/// Per process and task of `traces` (a timeline per process, on one
/// clock; aligned with them), what its receives cost it beyond its senders
/// (ms): a task that receives (a forward from its producers, a backward or
/// its input part from its consumers; not a weight part or an update) waited
/// `wait` from its start `start`; its last sender, ending at `end`, explains
/// max(0, end - start) of that, and the rest, at least 0, is the receives'
/// own time: the transport, the receiver's copy out of the message and its
/// waking from a poll, whether the message came before the task started or
/// while it waited.
std::vector<std::vector<double>>
receiveOverheadMs(const schedule::StageGraph &graph,
                  const std::vector<std::vector<TraceEvent>> &traces);

struct RunTiming {
  int64_t microBatches = 0;
  /// Measured: first action's start to last action's end, over devices.
  double measuredMs = 0;
  /// Measured: 1 - (time in stage code) / (devices x measuredMs).
  double measuredIdle = 0;
  /// The simulator's makespan and idle share for the same lists.
  double simulatedMs = 0, simulatedIdle = 0;
  /// The tasks that waited for a message (`receives`) and the median of
  /// their receiveOverheadMs (`receiveMs`), which each task's wall-time
  /// cost includes; the simulation with the stage code's wall times alone
  /// (free transfers).
  size_t receives = 0;
  double receiveMs = 0;
  double freeTransfersMs = 0, freeTransfersIdle = 0;
  /// Largest share of measuredMs that one device spends in updates, and in
  /// bookkeeping (data slices, gradient sums, result copies, the loop).
  double updateShare = 0, bookkeepingShare = 0;
  /// Per process, the mean CPU time of its updates, given to
  /// the simulator as its update time (empty: no update took time; the
  /// simulated updates then take none).
  std::vector<double> processUpdateMs;
  /// The per-stage costs given to the simulator (ms).
  std::vector<double> stageForwardMs, stageBackwardMs;
  /// The simulated timeline (per process, as the simulator records it).
  std::vector<schedule::SimEvent> simulatedEvents;
  /// The ring link rate the all-reduces were priced at (GB/s; 0: free), and
  /// the simulated all-reduces' time summed over processes.
  double allReduceGBps = 0, simulatedAllReduceMs = 0;
  /// Where the processes computed (SharedCores::str(); empty: not known).
  std::string cores;
  /// Whether the simulation shared a node's cores among its processes (its
  /// costs are then CPU times); the simulation of every process on a core
  /// of its own, with the wall times, is then ownCoresMs and ownCoresIdle.
  bool sharedCores = false;
  double ownCoresMs = 0, ownCoresIdle = 0;
};

/// Per stage of `graph`, the bytes of gradients its device's replicas
/// all-reduce with it: each parameter's (`parameters`' shapes, as floats)
/// once per device that reads it (`placement`), with that device's lowest
/// stage (the runtime reduces a parameter with the last of its readers in
/// its device's order, highest stage first; readers per stage are not known
/// here, so a parameter that only a device's higher stage reads is counted
/// with its lowest).
std::vector<uint64_t>
stageGradientBytes(const schedule::StageGraph &graph,
                   const ParameterPlacement &placement,
                   llvm::ArrayRef<ParameterInfo> parameters);

/// The simulated timeline of `timing` as a Chrome / Perfetto trace in the
/// measured trace's form (one track per device): ftpipe-run writes it beside
/// `--trace FILE` as FILE.simulated.json under `--compare-simulator`.
llvm::json::Value simulatedTrace(const RunTiming &timing);

/// The median of `values` (the upper one of an even count; 0 when empty):
/// how per-micro-batch times become one figure here and in profiles.
double median(std::vector<double> values);

/// Compares the run described by `graph`, `config` and `lists` (as
/// generated, with updates) with its timelines. A replicated run (Replicas.h)
/// gives its per-process lists and timelines and its `replicas`; its
/// simulated all-reduces of `gradientBytes` (per stage: stageGradientBytes)
/// take the ring all-reduce's time on links of `allReduceGBps` (ms = 2 (r -
/// 1) / r x bytes over the rate), or nothing when the rate is 0. Each
/// process's simulated updates take its processUpdateMs. `cores` places the
/// processes on nodes (sharedCoresOf); where a node has fewer cores than
/// processes the simulation shares them. Fails on a negative rate, a rate
/// without one byte count per stage, or cores of another number of processes.
llvm::Expected<RunTiming> compareWithSimulator(
    const schedule::StageGraph &graph, const schedule::ScheduleConfig &config,
    const schedule::Schedule &lists,
    const std::vector<std::vector<TraceEvent>> &traces,
    const schedule::ReplicaLayout &replicas = {},
    llvm::ArrayRef<uint64_t> gradientBytes = {}, double allReduceGBps = 0,
    const schedule::SharedCores &cores = {});

/// Lines for a person: measured and simulated time per micro-batch, idle
/// shares, their ratio (with shared cores, the simulation on cores of their
/// own beside it), the simulation with free transfers, and the overhead.
std::string formatRunTiming(const RunTiming &timing);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_RUNTIMING_H
