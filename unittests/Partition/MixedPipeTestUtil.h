//===- MixedPipeTestUtil.h - Mixed-Pipe test fixtures -----------*- C++ -*-===//
//
// Hardware, random graphs of the property-test matrix and a T5-shaped graph,
// shared by the tests of Mixed-Pipe's phases (CoarseningTest.cpp,
// AssignmentTest.cpp, RefinementTest.cpp) and of its orchestration
// (MixedPipeTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_UNITTESTS_PARTITION_MIXEDPIPETESTUTIL_H
#define FTPIPE_UNITTESTS_PARTITION_MIXEDPIPETESTUTIL_H

#include "TestUtil.h"

#include "FTPipe/Partition/Objective.h"

#include <algorithm>
#include <cmath>

namespace ftpipe {
namespace partition {
namespace test {

/// P devices at 12 GB/s and 20 us (PCIe-like), `memory` bytes each; with
/// `mixedSpeeds`, odd devices are half as fast.
inline Hardware makeHardware(size_t p, uint64_t memory = 1ull << 50,
                             bool mixedSpeeds = false) {
  HardwareSpec spec;
  spec.name = "test";
  for (size_t i = 0; i < p; ++i) {
    Device d;
    d.name = "dev" + std::to_string(i);
    d.memoryBytes = memory;
    d.tflops = mixedSpeeds && i % 2 ? 5.0 : 10.0;
    d.memGBps = 300.0;
    spec.devices.push_back(d);
  }
  spec.intraNode = {12.0, 20.0};
  spec.network = {6.0, 50.0};
  return unwrap(Hardware::create(spec));
}

/// A random DAG of `family` with `n` nodes from `seed`.
inline Graph makeGraph(GraphFamily family, uint32_t n, uint64_t seed) {
  RandomGraphOptions o;
  o.family = family;
  o.numNodes = n;
  o.seed = seed;
  return unwrap(generateRandomGraph(o));
}

/// The random-DAG families of the property-test matrix.
inline constexpr GraphFamily kFamilies[] = {
    GraphFamily::Chain, GraphFamily::Layered, GraphFamily::Wide};

/// The family's name, for test traces.
inline const char *familyName(GraphFamily f) {
  switch (f) {
  case GraphFamily::Chain:
    return "chain";
  case GraphFamily::Layered:
    return "layered";
  case GraphFamily::Wide:
    return "wide";
  }
  return "?";
}

/// The objective of `plan` (ms per micro-batch), or 0 after a test failure
/// when it cannot be evaluated.
inline double planObjective(const Graph &g, const Hardware &hw,
                            const Plan &plan, const ObjectiveConfig &cfg) {
  llvm::Expected<PlanMetrics> m = evaluatePlan(g, hw, plan, cfg);
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return 0.0;
  }
  return m->asyncMsPerMicroBatch;
}

/// Equal to 1e-7 relative (at least 1e-7 absolute).
inline bool near(double a, double b) {
  return std::fabs(a - b) <= 1e-7 * std::max({1.0, std::fabs(a), std::fabs(b)});
}

/// A T5-shaped graph with FTPipe's scope format: `blocks` encoder and
/// decoder blocks of 6 ops each (encoder 4x the compute, decoder 2x the
/// parameters), embedding first and a tied head last.
inline Graph t5Like(int blocks) {
  GraphBuilder b;
  const char *root = "T5ForConditionalGeneration";
  ParamId shared = b.addParam("shared", 64 << 20);
  NodeId emb = b.addNode(std::string(root) + "/Embedding[shared]",
                         "tosa.gather", {0.1, 0.1, 1 << 20, 1 << 20});
  b.addParamUse(emb, shared);
  b.addValue(kNoNode, 4096, {emb}, false);
  NodeId prev = emb;
  for (const char *stack : {"encoder", "decoder"}) {
    bool enc = stack[0] == 'e';
    for (int k = 0; k < blocks; ++k) {
      std::string blk = std::string(root) + "/T5Stack[" + stack +
                        "]/ModuleList[block]/T5Block[" + std::to_string(k) +
                        "]";
      const char *sub[] = {"T5LayerSelfAttention[0]/Linear[q]",
                           "T5LayerSelfAttention[0]/Linear[k]",
                           "T5LayerSelfAttention[0]/Linear[o]",
                           "T5LayerFF[1]/T5DenseReluDense[DenseReluDense]/"
                           "Linear[wi]",
                           "T5LayerFF[1]/T5DenseReluDense[DenseReluDense]/"
                           "Linear[wo]",
                           "T5LayerFF[1]/T5LayerNorm[layer_norm]"};
      for (const char *s : sub) {
        double f = enc ? 0.4 : 0.1;
        NodeId n = b.addNode(blk + "/" + s, "tosa.matmul",
                             {f, 2 * f, 1 << 16, 1 << 20});
        b.addParamUse(n, b.addParam(blk + "/" + s, enc ? 4 << 20 : 8 << 20));
        b.addEdge(prev, n, 1 << 20);
        prev = n;
      }
    }
  }
  NodeId head = b.addNode(std::string(root) + "/Linear[lm_head]", "tosa.matmul",
                          {0.2, 0.4, 1 << 20, 1 << 20});
  b.addParamUse(head, shared);
  b.addEdge(prev, head, 1 << 20);
  return unwrap(b.build());
}

} // namespace test
} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_UNITTESTS_PARTITION_MIXEDPIPETESTUTIL_H
