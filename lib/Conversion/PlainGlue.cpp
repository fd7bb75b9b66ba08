//===- PlainGlue.cpp - Loop-free functions without optimisation -----------===//
//
// ftpipe-plain-glue: a function without loops (the `_mlir_ciface_`
// wrappers, the entry points, the stage functions whose compute is in
// outlined layers and library calls) runs each instruction at most once per
// call, mostly moving memref descriptors; for a stage of hundreds of buffers
// its blocks are thousands of instructions long, and LLVM's instruction
// selection and post-RA scheduler (superlinear in a block's size) took
// seconds per function. Marked `optnone` and `noinline`, it is compiled as it
// is, in about linear time, and its callees stay functions of their own
// (docs/Compile.md, "Compile time").
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_PLAINGLUEPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct PlainGluePass : ftpipe::impl::PlainGluePassBase<PlainGluePass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

/// Whether the control flow of `body` may repeat an operation: a cycle among
/// its blocks, or an operation with regions of its own (whose semantics this
/// pass does not know).
static bool mayLoop(Region &body) {
  for (Block &block : body)
    for (Operation &op : block)
      if (op.getNumRegions() != 0)
        return true;
  // Depth-first from the entry block; an edge to a block on the path closes
  // a cycle.
  enum class Visit { OnPath, Done };
  llvm::DenseMap<Block *, Visit> visits;
  SmallVector<std::pair<Block *, unsigned>> path;
  visits[&body.front()] = Visit::OnPath;
  path.push_back({&body.front(), 0});
  while (!path.empty()) {
    auto &[block, next] = path.back();
    if (next == block->getNumSuccessors()) {
      visits[block] = Visit::Done;
      path.pop_back();
      continue;
    }
    Block *successor = block->getSuccessor(next++);
    auto [it, inserted] = visits.try_emplace(successor, Visit::OnPath);
    if (inserted)
      path.push_back({successor, 0});
    else if (it->second == Visit::OnPath)
      return true;
  }
  return false;
}

void PlainGluePass::runOnOperation() {
  UnitAttr unit = UnitAttr::get(&getContext());
  for (auto function : getOperation().getOps<LLVM::LLVMFuncOp>()) {
    if (function.isExternal())
      continue;
    size_t ops = 0;
    for (Block &block : function.getBody())
      ops += block.getOperations().size();
    if (ops < minOps || mayLoop(function.getBody()))
      continue;
    function.setNoInlineAttr(unit);
    function.setOptimizeNoneAttr(unit);
  }
}
