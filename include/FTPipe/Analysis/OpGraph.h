//===- OpGraph.h - From a function to lib/Partition's graph -----*- C++ -*-===//
//
// The bridge between IR and the MLIR-free partitioner: the ops of a function
// body become nodes (in program order, which is topological), SSA values
// become hyperedges with byte sizes, and `ftpipe.param` arguments become
// parameters. Also the gradient-flow facts the cost model needs, and the
// conversion of the hardware description between its attribute and
// lib/Partition's Hardware.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_ANALYSIS_OPGRAPH_H
#define FTPIPE_ANALYSIS_OPGRAPH_H

#include "FTPipe/Analysis/CostModel.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Objective.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace mlir {
namespace ftpipe {

/// A function's op graph and the op behind each node.
struct OpGraph {
  partition::Graph graph;
  /// ops[n] is the op of node n.
  std::vector<Operation *> ops;
};

/// The function a whole-model pass works on: the one named `name`, or, when
/// `name` is empty, the only function with a body. Emits an error at the
/// module and fails when there is no such function or the choice is
/// ambiguous.
FailureOr<func::FuncOp> getModelFunction(ModuleOp module, StringRef name);

/// Facts about every value of `func` that the cost model needs: which are
/// parameters (or computed from parameters alone, like a transposed weight)
/// and which receive a gradient in backward (none flows from a frozen
/// parameter, `ftpipe.frozen`).
DenseMap<Value, OperandInfo> analyzeGradientFlow(func::FuncOp func);

/// Checks that FTPipe can cost `func`: one block (ops in other blocks would
/// be left out of costs and plans) and tensors of countable size (see
/// getUnsizedTypeReason). Emits an error at the first offending op or
/// argument and fails.
LogicalResult verifyCostableFunction(func::FuncOp func);

/// Builds the graph of `func`: one node per op of the body (the terminator
/// excluded), costs from each op's `ftpipe.cost`. Values made by constants
/// and `tensor.empty` weigh 0 bytes: a stage that needs them makes its own.
/// Emits an error at the first op without a cost and fails.
FailureOr<OpGraph> buildOpGraph(func::FuncOp func);

/// Weights' transposes that the cost model counts as folded into their
/// matmuls (isFoldedWeightTranspose) but that `plan` puts in another stage
/// than one of them, directly or through the reshapes in between: code
/// generation copies them, which the plan's figures leave out.
struct ApartTransposes {
  size_t count = 0;
  uint64_t bytes = 0;
};
ApartTransposes findApartTransposes(const OpGraph &opGraph,
                                    const partition::Plan &plan);

/// The hardware as an attribute, with one link per device pair.
FailureOr<HardwareAttr>
getHardwareAttr(MLIRContext *context, const partition::Hardware &hardware,
                function_ref<InFlightDiagnostic()> emitError);

/// The hardware an attribute describes; fails with a diagnostic when it is
/// incomplete (e.g. a device pair without a link).
FailureOr<partition::Hardware>
getHardware(HardwareAttr attr, function_ref<InFlightDiagnostic()> emitError);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_ANALYSIS_OPGRAPH_H
