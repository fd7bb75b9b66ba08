//===- Verify.h - Independent plan verifier ---------------------*- C++ -*-===//
//
// Checks a plan without sharing code with the objective or any algorithm, so
// that a bug in one is not silently repeated in the other (mt-KaHyPar's
// verify_partition). Used by tests, benchmarks and the end of every
// partitioning pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_VERIFY_H
#define FTPIPE_PARTITION_VERIFY_H

#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Plan.h"

#include "llvm/Support/Error.h"

namespace ftpipe {
namespace partition {

/// What verifyPlan checks beyond the structure.
struct VerifyOptions {
  /// Check that every device's memory (ObjectiveConfig's model) fits.
  bool checkMemory = true;
  /// Allow stages that hold no node.
  bool allowEmptyStages = false;
};

/// Succeeds when: every node is in exactly one existing stage; every stage
/// is on an existing device; a per-stage recompute choice, if any, has one
/// entry per stage; replicated nodes (Plan::nodeReplicated) read only graph
/// inputs and results of replicated nodes; no stage is empty, i.e. without a
/// node that is not replicated (unless allowed); the stage graph (an edge
/// wherever a value flows between stages) is acyclic; and, when asked, every
/// device's memory fits its budget (each stage keeping activations or
/// recomputing as the plan, else the config, says). Otherwise the error
/// names the first problem, e.g. "stage graph has a cycle: stage 1 -> stage
/// 2 -> stage 1 (value 7 flows from node 12 in stage 2 to node 13 in stage
/// 1)" or "device 2 needs 12.40 GiB but has 11.00 GiB (...)".
llvm::Error verifyPlan(const Graph &graph, const Hardware &hw, const Plan &plan,
                       const ObjectiveConfig &config,
                       const VerifyOptions &options = {});

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_VERIFY_H
