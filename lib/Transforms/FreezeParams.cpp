//===- FreezeParams.cpp - Mark the parameters left unchanged ---*- C++ -*-===//
//
// Fine-tuning often leaves a prefix of the model unchanged (PipeTransformer,
// docs/Freezing.md). This pass marks those parameters `ftpipe.frozen`, by
// Hugging Face name (a regular expression or a list); the activity analysis
// of ftpipe-outline-stages and ftpipe-differentiate, the cost model and the
// manifest read the mark. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Regex.h"

#define DEBUG_TYPE "ftpipe-freeze-params"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_FREEZEPARAMSPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
struct FreezeParamsPass
    : public mlir::ftpipe::impl::FreezeParamsPassBase<FreezeParamsPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// The name a parameter goes by: its `ftpipe.name`, or `argN`.
static std::string parameterName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(
          index, FTPipeDialect::kNameAttrName))
    return name.getValue().str();
  return "arg" + std::to_string(index);
}

void FreezeParamsPass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (func.isExternal())
    return;
  SmallVector<unsigned> params;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, FTPipeDialect::kParamAttrName))
      params.push_back(i);
  if (params.empty() || (regex.empty() && names.empty()))
    return;

  llvm::Regex pattern(regex);
  std::string reason;
  if (!regex.empty() && !pattern.isValid(reason)) {
    emitError(func.getLoc())
        << "invalid freeze regex '" << regex << "': " << reason;
    return signalPassFailure();
  }
  llvm::StringSet<> listed;
  for (const std::string &name : names)
    listed.insert(name);
  llvm::StringSet<> found;
  bool regexMatched = false;
  Builder builder(&getContext());
  for (unsigned i : params) {
    std::string name = parameterName(func, i);
    bool byRegex = !regex.empty() && pattern.match(name);
    bool byName = listed.contains(name);
    regexMatched |= byRegex;
    if (byName)
      found.insert(name);
    if (!byRegex && !byName)
      continue;
    if (!func.getArgAttr(i, FTPipeDialect::kFrozenAttrName)) {
      func.setArgAttr(i, FTPipeDialect::kFrozenAttrName, builder.getUnitAttr());
      ++numFrozen;
    }
  }
  if (!regex.empty() && !regexMatched) {
    emitError(func.getLoc())
        << "freeze regex '" << regex << "' matches no parameter of '@"
        << func.getSymName() << "'";
    return signalPassFailure();
  }
  for (const std::string &name : names)
    if (!found.contains(name)) {
      emitError(func.getLoc())
          << "cannot freeze '" << name << "': '@" << func.getSymName()
          << "' has no parameter of that name";
      return signalPassFailure();
    }
}
