//===- InlineSingleCalls.cpp - Functions called once, inlined -------------===//
//
// ftpipe-inline-single-calls: each private function of one block that one
// func.call calls (a stage function and its entry point) is inlined there
// and erased, so that the deallocation pipeline sees allocations instead of
// a call whose results may alias every one of its hundreds of operands
// (docs/Compile.md, "Compile time").
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_INLINESINGLECALLSPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

/// The only use of `callee` in `module` when it is a call from another
/// function.
func::CallOp singleCall(func::FuncOp callee, ModuleOp module) {
  std::optional<SymbolTable::UseRange> uses = callee.getSymbolUses(module);
  if (!uses || !llvm::hasSingleElement(*uses))
    return nullptr;
  auto call = dyn_cast<func::CallOp>(uses->begin()->getUser());
  if (!call || call->getParentOfType<func::FuncOp>() == callee)
    return nullptr;
  return call;
}

struct InlineSingleCallsPass
    : ftpipe::impl::InlineSingleCallsPassBase<InlineSingleCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto callee :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (!callee.isPrivate() || callee.isExternal() ||
          !llvm::hasSingleElement(callee.getBody()))
        continue;
      func::CallOp call = singleCall(callee, module);
      if (!call)
        continue;
      Block &body = callee.getBody().front();
      IRMapping mapping;
      mapping.map(body.getArguments(), call.getOperands());
      OpBuilder builder(call);
      for (Operation &op : body.without_terminator())
        builder.clone(op, mapping);
      for (auto [result, returned] : llvm::zip_equal(
               call.getResults(), body.getTerminator()->getOperands()))
        result.replaceAllUsesWith(mapping.lookupOrDefault(returned));
      call.erase();
      callee.erase();
    }
  }
};

} // namespace
