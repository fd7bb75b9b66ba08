//===- FreeCallResults.cpp - Free call results without alias checks -------===//
//
// ftpipe-free-call-results: upstream's ownership-based deallocation cannot
// tell whether a call's result aliases a value its block returns, so it
// frees call results (and the buffers they were computed from) at the
// block's end, behind a runtime pointer comparison with every retained
// value. The outlined layer functions (ftpipe-outline-layers) return only
// buffers they allocate; with that known, each such memref of a
// `bufferization.dealloc` that provably aliases no retained value and no
// other memref of it moves to a dealloc of its own, which lowers to a plain
// `memref.dealloc` that ftpipe-early-deallocation then moves to the
// buffer's last use.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_FREECALLRESULTSPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct FreeCallResultsPass
    : ftpipe::impl::FreeCallResultsPassBase<FreeCallResultsPass> {
  void runOnOperation() override;
};

/// The buffer a memref value is a view of: through views, casts and the
/// base buffer of `memref.extract_strided_metadata`.
Value rootOf(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
      value = view.getViewSource();
      continue;
    }
    if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(op)) {
      value = metadata.getSource();
      continue;
    }
    if (auto cast = dyn_cast<memref::CastOp>(op)) {
      value = cast.getSource();
      continue;
    }
    break;
  }
  return value;
}

/// Roots that are fresh buffers: allocations, and results of calls of
/// functions that return only buffers they allocate or clone (or views of
/// them), a different one for each result.
class FreshBuffers {
public:
  explicit FreshBuffers(ModuleOp module) : symbols(module) {}

  bool isFresh(Value root) {
    Operation *op = root.getDefiningOp();
    if (!op)
      return false;
    if (isa<memref::AllocOp>(op))
      return true;
    auto call = dyn_cast<func::CallOp>(op);
    if (!call)
      return false;
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    return callee && returnsFreshBuffers(callee);
  }

private:
  bool returnsFreshBuffers(func::FuncOp function) {
    auto [it, inserted] = known.try_emplace(function, false);
    if (!inserted)
      return it->second;
    if (function.isExternal())
      return false;
    // Each memref result is (a view of) an allocation of its own.
    bool fresh = true;
    function.walk([&](func::ReturnOp ret) {
      llvm::SmallPtrSet<Operation *, 8> allocs;
      for (Value operand : ret.getOperands()) {
        if (!isa<BaseMemRefType>(operand.getType()))
          continue;
        Operation *alloc = rootOf(operand).getDefiningOp();
        if (!alloc || !isa<memref::AllocOp, bufferization::CloneOp>(alloc) ||
            !allocs.insert(alloc).second)
          fresh = false;
      }
    });
    known[function] = fresh;
    return fresh;
  }

  SymbolTable symbols;
  DenseMap<Operation *, bool> known;
};

/// Whether the buffers with roots `a` and `b` provably differ: two distinct
/// fresh buffers, or a fresh buffer and an argument of the function (which
/// existed before it).
bool distinct(Value a, Value b, FreshBuffers &fresh) {
  if (a == b)
    return false;
  bool freshA = fresh.isFresh(a), freshB = fresh.isFresh(b);
  if (freshA && freshB)
    return true;
  auto isArgument = [](Value v) { return isa<BlockArgument>(v); };
  return (freshA && isArgument(b) &&
          isa<FunctionOpInterface>(b.getParentBlock()->getParentOp())) ||
         (freshB && isArgument(a) &&
          isa<FunctionOpInterface>(a.getParentBlock()->getParentOp()));
}

} // namespace

void FreeCallResultsPass::runOnOperation() {
  FreshBuffers fresh(getOperation());
  SmallVector<bufferization::DeallocOp> deallocs;
  getOperation().walk(
      [&](bufferization::DeallocOp op) { deallocs.push_back(op); });
  for (bufferization::DeallocOp dealloc : deallocs) {
    SmallVector<Value> roots, retainedRoots;
    for (Value memref : dealloc.getMemrefs())
      roots.push_back(rootOf(memref));
    for (Value retained : dealloc.getRetained())
      retainedRoots.push_back(rootOf(retained));
    SmallVector<Value> keptMemrefs, keptConditions;
    SmallVector<std::pair<Value, Value>> alone;
    for (auto [i, memref] : llvm::enumerate(dealloc.getMemrefs())) {
      Value root = roots[i];
      bool apart =
          fresh.isFresh(root) &&
          llvm::all_of(retainedRoots,
                       [&](Value r) { return distinct(root, r, fresh); }) &&
          llvm::all_of(llvm::enumerate(roots), [&](auto other) {
            return other.index() == i || distinct(root, other.value(), fresh);
          });
      Value condition = dealloc.getConditions()[i];
      if (apart)
        alone.push_back({memref, condition});
      else {
        keptMemrefs.push_back(memref);
        keptConditions.push_back(condition);
      }
    }
    if (alone.empty())
      continue;
    OpBuilder builder(dealloc);
    for (auto [memref, condition] : alone)
      builder.create<bufferization::DeallocOp>(
          dealloc.getLoc(), ValueRange{memref}, ValueRange{condition},
          ValueRange{});
    // What is left keeps the retained values and their ownership results
    // (a memref that aliases none of them does not change those).
    auto rest = builder.create<bufferization::DeallocOp>(
        dealloc.getLoc(), keptMemrefs, keptConditions, dealloc.getRetained());
    dealloc.replaceAllUsesWith(rest.getResults());
    dealloc.erase();
  }
}
