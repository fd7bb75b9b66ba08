//===- partition-from-arrays.cpp - lib/Partition without MLIR ---*- C++ -*-===//
//
// How a compiler that is not MLIR-based uses FTPipe's partitioner: describe
// the model as arrays (ops with their costs, tensors between them, weights),
// build a validated graph, pick a cluster preset, run Mixed-Pipe and the
// exact contiguous baseline, verify both plans independently and print them.
// Exits non-zero when anything fails.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/MixedPipe.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/SeqPipe.h"
#include "FTPipe/Partition/Verify.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace ftpipe::partition;

namespace {
/// The host compiler's own description of a model: an encoder of `layers`
/// blocks, each an attention op and a feed-forward op, between an embedding
/// and a head that share (tie) one weight. Ops are in topological order.
struct ArrayModel {
  std::vector<std::string> scopes, types;
  std::vector<double> fwdMs, bwdMs;
  std::vector<uint64_t> actBytes;
  /// Tensor t flows from op edgeSrc[t] to op edgeDst[t], edgeBytes[t] bytes.
  std::vector<uint32_t> edgeSrc, edgeDst;
  std::vector<uint64_t> edgeBytes;
  /// Weight w (weightBytes[w] bytes) is read by op weightReader[w]; the tied
  /// embedding is read by the first and the last op.
  std::vector<uint64_t> weightBytes;
  std::vector<uint32_t> weightReader;
};
} // namespace

static ArrayModel makeModel(unsigned layers) {
  const uint64_t hidden = 4ull << 20; // one micro-batch of activations
  ArrayModel m;
  auto addOp = [&](std::string scope, std::string type, double fwd,
                   uint64_t act) {
    m.scopes.push_back(std::move(scope));
    m.types.push_back(std::move(type));
    m.fwdMs.push_back(fwd);
    m.bwdMs.push_back(2 * fwd);
    m.actBytes.push_back(act);
    return uint32_t(m.fwdMs.size() - 1);
  };
  auto addEdge = [&](uint32_t src, uint32_t dst) {
    m.edgeSrc.push_back(src);
    m.edgeDst.push_back(dst);
    m.edgeBytes.push_back(hidden);
  };
  uint32_t prev = addOp("Toy/Embedding", "gather", 0.2, hidden);
  for (unsigned l = 0; l < layers; ++l) {
    std::string block = "Toy/Block[" + std::to_string(l) + "]";
    uint32_t attn = addOp(block + "/Attention", "attention", 3.0, 3 * hidden);
    uint32_t ffn = addOp(block + "/FeedForward", "mlp", 4.0, 4 * hidden);
    addEdge(prev, attn);
    addEdge(attn, ffn);
    addEdge(prev, ffn); // residual
    m.weightBytes.push_back(4ull * 1024 * 1024 * 16); // attention weights
    m.weightReader.push_back(attn);
    m.weightBytes.push_back(8ull * 1024 * 1024 * 16); // feed-forward weights
    m.weightReader.push_back(ffn);
    prev = ffn;
  }
  uint32_t head = addOp("Toy/Head", "matmul", 1.5, hidden);
  addEdge(prev, head);
  return m;
}

/// Turns the arrays into FTPipe's validated graph.
static llvm::Expected<Graph> buildGraph(const ArrayModel &m) {
  GraphBuilder builder;
  for (size_t n = 0; n < m.fwdMs.size(); ++n) {
    NodeCost cost;
    cost.fwdMs = m.fwdMs[n];
    cost.bwdMs = m.bwdMs[n];
    cost.actBytes = m.actBytes[n];
    builder.addNode(m.scopes[n], m.types[n], cost);
  }
  // Token ids enter the graph; no op produces them and no gradient flows.
  builder.addValue(kNoNode, 4096, {0}, /*needsGrad=*/false);
  for (size_t t = 0; t < m.edgeSrc.size(); ++t)
    builder.addEdge(m.edgeSrc[t], m.edgeDst[t], m.edgeBytes[t]);
  for (size_t w = 0; w < m.weightBytes.size(); ++w)
    builder.addParamUse(m.weightReader[w],
                        builder.addParam("w" + std::to_string(w),
                                         m.weightBytes[w]));
  ParamId embedding = builder.addParam("embedding", 64ull << 20);
  builder.addParamUse(0, embedding);
  builder.addParamUse(NodeId(m.fwdMs.size() - 1), embedding);
  return builder.build();
}

static void printPlan(llvm::StringRef method, const Plan &plan,
                      const PlanMetrics &metrics) {
  llvm::outs() << method << ": " << plan.numStages() << " stages, "
               << llvm::format("%.3f", metrics.asyncMsPerMicroBatch)
               << " ms per micro-batch (lower bound "
               << llvm::format("%.3f", metrics.lowerBoundMs) << " ms)\n";
  for (StageId s = 0; s < plan.numStages(); ++s) {
    llvm::outs() << "  stage " << s << " on device " << plan.stageDevice[s]
                 << ":";
    for (NodeId n = 0; n < plan.nodeStage.size(); ++n)
      if (plan.nodeStage[n] == s)
        llvm::outs() << " " << n;
    llvm::outs() << "\n";
  }
}

/// Verifies `plan` with the independent checker, then prints it.
static llvm::Error checkAndPrint(llvm::StringRef method, const Graph &graph,
                                 const Hardware &hw, const Plan &plan,
                                 const ObjectiveConfig &objective) {
  if (llvm::Error error = verifyPlan(graph, hw, plan, objective))
    return error;
  llvm::Expected<PlanMetrics> metrics =
      evaluatePlan(graph, hw, plan, objective);
  if (!metrics)
    return metrics.takeError();
  printPlan(method, plan, *metrics);
  return llvm::Error::success();
}

static llvm::Error run() {
  llvm::Expected<Graph> graph = buildGraph(makeModel(/*layers=*/8));
  if (!graph)
    return graph.takeError();
  llvm::Expected<Hardware> preset = getHardwarePreset("rtx2080ti-pcie-x8");
  if (!preset)
    return preset.takeError();
  llvm::Expected<Hardware> hw = preset->firstDevices(4);
  if (!hw)
    return hw.takeError();
  llvm::outs() << graph->numNodes() << " ops, " << graph->numValues()
               << " tensors, " << graph->numParams() << " weights on "
               << hw->numDevices() << " devices of " << hw->name() << "\n";

  MixedPipeConfig mixedConfig;
  llvm::Expected<MixedPipeResult> mixed =
      runMixedPipe(*graph, *hw, mixedConfig);
  if (!mixed)
    return mixed.takeError();
  if (llvm::Error error = checkAndPrint("mixed-pipe", *graph, *hw, mixed->plan,
                                       mixedConfig.objective))
    return error;

  SeqPipeConfig seqConfig;
  llvm::Expected<SeqPipeResult> seq = seqPipeDP(*graph, *hw, seqConfig);
  if (!seq)
    return seq.takeError();
  return checkAndPrint("seq-dp", *graph, *hw, seq->plan, seqConfig.objective);
}

int main() {
  if (llvm::Error error = run()) {
    llvm::errs() << "partition-from-arrays: " << llvm::toString(std::move(error))
                 << "\n";
    return 1;
  }
  return 0;
}
