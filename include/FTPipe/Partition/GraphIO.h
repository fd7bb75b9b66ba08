//===- GraphIO.h - Graph and plan as JSON -----------------------*- C++ -*-===//
//
// Reads and writes a Graph (and optionally a Plan) in the JSON schema of
// `ftpipe-export-graph` (docs/Partition.md): `nodes` and `edges` as issue 4
// specifies, plus `values` and `params` arrays that make the round trip
// lossless (hyperedges and tied weights). Files written by other tools that
// carry only `nodes` and `edges` load too, with documented defaults.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_GRAPHIO_H
#define FTPIPE_PARTITION_GRAPHIO_H

#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Plan.h"

#include "llvm/Support/JSON.h"

#include <optional>

namespace ftpipe {
namespace partition {

/// A graph read from JSON, with the plan it carried if every node had a
/// `stage` and a `device`, and its devices' replicas (`replicas`, one
/// factor per plan device; empty: none).
struct GraphWithPlan {
  Graph graph;
  std::optional<Plan> plan;
  std::vector<int64_t> replicas;
};

/// Serializes the graph; when `plan` is given, each node also gets its
/// `stage` and `device`, otherwise both are -1, and `replicas` (each plan
/// device's, as `#ftpipe.plan` holds them) is written as `replicas` unless
/// every factor is 1. `plan` must match the graph (checked by assert only:
/// verify it first).
llvm::json::Value graphToJSON(const Graph &graph, const Plan *plan = nullptr,
                              llvm::ArrayRef<int64_t> replicas = {});

/// Parses a graph. Fails with a message naming the path of the bad field
/// (e.g. "expected a number at graph.nodes[3].fwd_ms") or the builder's
/// validation error. Without `values`, edges from the same source with equal
/// bytes are one value; without `params`, each node's `param_bytes` is its own
/// weight.
llvm::Expected<GraphWithPlan> graphFromJSON(const llvm::json::Value &json);

/// Writes graphToJSON to `path` (pretty-printed).
llvm::Error saveGraphJSON(llvm::StringRef path, const Graph &graph,
                          const Plan *plan = nullptr);

/// Reads and parses `path`.
llvm::Expected<GraphWithPlan> loadGraphJSON(llvm::StringRef path);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_GRAPHIO_H
