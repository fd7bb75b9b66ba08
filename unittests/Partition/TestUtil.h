//===- TestUtil.h - Helpers for lib/Partition unit tests --------*- C++ -*-===//
//
// Small graphs with round numbers, simple hardware, and random plans, shared
// by the Partition tests.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_UNITTESTS_PARTITION_TESTUTIL_H
#define FTPIPE_UNITTESTS_PARTITION_TESTUTIL_H

#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Plan.h"

#include "gtest/gtest.h"

#include <random>

namespace ftpipe {
namespace partition {
namespace test {

/// Unwraps an Expected or fails the test (returns a default value then).
template <typename T> T unwrap(llvm::Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    return T();
  }
  return std::move(*value);
}

/// Returns the error message of an Error ("" for success).
inline std::string message(llvm::Error err) {
  if (!err)
    return "";
  return llvm::toString(std::move(err));
}

/// P identical devices of `memory` bytes and 1 TFLOP/s, all pairs linked at
/// `gbps` GB/s (1 GB/s moves 1e6 bytes per ms) with `latencyUs`.
inline Hardware uniformHardware(size_t p, double gbps = 1.0,
                                double latencyUs = 0.0,
                                uint64_t memory = 1ull << 50) {
  HardwareSpec spec;
  spec.name = "test";
  for (size_t i = 0; i < p; ++i)
    spec.devices.push_back(
        {"dev" + std::to_string(i), memory, 1.0, 100.0, 0.0, 0});
  spec.intraNode = {gbps, latencyUs};
  spec.network = {gbps, latencyUs};
  return unwrap(Hardware::create(spec));
}

/// A chain of `n` nodes with the given per-node forward and backward times;
/// every edge carries `bytes` (with gradient when `grad`).
inline Graph chain(size_t n, double fwd, double bwd, uint64_t bytes,
                   bool grad = true) {
  GraphBuilder b;
  for (size_t i = 0; i < n; ++i)
    b.addNode("chain/op" + std::to_string(i), "test.op", {fwd, bwd, 0, bytes});
  for (size_t i = 0; i + 1 < n; ++i)
    b.addValue(NodeId(i), bytes, {NodeId(i + 1)}, grad);
  return unwrap(b.build());
}

/// Adds `n` layers "model/layerI" costing `cost` that each read `shared` and
/// form a chain of `chainBytes` values; each reads a weight of its own
/// ("layerI", `paramBytes`) when `paramBytes` is not 0.
inline void addLayersReading(GraphBuilder &b, ValueId shared, size_t n,
                             NodeCost cost, uint64_t chainBytes,
                             uint64_t paramBytes = 0) {
  NodeId prev = kNoNode;
  for (size_t i = 0; i < n; ++i) {
    NodeId layer =
        b.addNode("model/layer" + std::to_string(i), "test.op", cost);
    if (paramBytes != 0)
      b.addParamUse(layer, b.addParam("layer" + std::to_string(i), paramBytes));
    b.addConsumer(shared, layer);
    if (prev != kNoNode)
      b.addEdge(prev, layer, chainBytes);
    prev = layer;
  }
}

/// Random plan whose stages are contiguous ranges of the topological order
/// (so the stage graph is acyclic), each on a random device (devices may
/// hold several stages).
inline Plan randomContiguousPlan(const Graph &g, size_t stages, size_t devices,
                                 uint64_t seed) {
  std::mt19937_64 rng(seed);
  size_t n = g.numNodes();
  stages = std::max<size_t>(1, std::min(stages, n));
  std::vector<size_t> cuts;
  for (size_t i = 1; i < n; ++i)
    cuts.push_back(i);
  std::shuffle(cuts.begin(), cuts.end(), rng);
  cuts.resize(stages - 1);
  std::sort(cuts.begin(), cuts.end());
  Plan plan;
  size_t stage = 0;
  for (size_t i = 0; i < n; ++i) {
    while (stage < cuts.size() && cuts[stage] <= i)
      ++stage;
    plan.nodeStage.push_back(StageId(stage));
  }
  for (size_t s = 0; s < stages; ++s)
    plan.stageDevice.push_back(DeviceId(rng() % devices));
  return plan;
}

} // namespace test
} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_UNITTESTS_PARTITION_TESTUTIL_H
