//===- FreezeParameters.cpp - ftpipe-compile's --freeze ---------*- C++ -*-===//
//
// Reads the names file through the bounded reader (so a line that names no
// parameter is reported with its line number) and runs ftpipe-freeze-params
// on the model function. In a library so that the fuzz target (ftpipe-fuzz's
// 'F' inputs) reads names files as ftpipe-compile does.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Transforms/FreezeParameters.h"

#include "FTPipe/Analysis/OpGraph.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Support/BoundedInput.h"
#include "FTPipe/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::ftpipe;

/// The names listed in `path`, each checked against `known`.
static FailureOr<std::vector<std::string>>
readNames(ModuleOp module, llvm::StringRef path,
          const llvm::StringSet<> &known) {
  auto buffer = ::ftpipe::support::readBoundedFile(path, "freeze file");
  if (!buffer) {
    emitError(module.getLoc())
        << "--freeze: " << llvm::toString(buffer.takeError());
    return failure();
  }
  std::vector<std::string> names;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (auto [index, line] : llvm::enumerate(lines)) {
    llvm::StringRef name = line.trim();
    if (name.empty() || name.starts_with("#"))
      continue;
    if (!known.contains(name)) {
      emitError(module.getLoc())
          << "--freeze: " << path << ":" << index + 1 << ": '" << name
          << "' is not a parameter of the model";
      return failure();
    }
    names.push_back(name.str());
  }
  if (names.empty()) {
    emitError(module.getLoc()) << "--freeze: " << path << " names no parameter";
    return failure();
  }
  return names;
}

LogicalResult mlir::ftpipe::freezeParameters(ModuleOp module,
                                             llvm::StringRef spec) {
  FailureOr<func::FuncOp> model = getModelFunction(module, "");
  if (failed(model))
    return failure();
  FreezeParamsPassOptions options;
  // The options refer to the names (an ArrayRef): they live until the pass
  // has run.
  FailureOr<std::vector<std::string>> names;
  if (spec.consume_front("@")) {
    llvm::StringSet<> known;
    for (unsigned i = 0; i < model->getNumArguments(); ++i)
      if (model->getArgAttr(i, FTPipeDialect::kParamAttrName))
        if (auto name = model->getArgAttrOfType<StringAttr>(
                i, FTPipeDialect::kNameAttrName))
          known.insert(name.getValue());
    names = readNames(module, spec, known);
    if (failed(names))
      return failure();
    options.names = *names;
  } else {
    options.regex = spec.str();
  }
  PassManager pm(module.getContext(), func::FuncOp::getOperationName());
  pm.addPass(createFreezeParamsPass(options));
  return pm.run(*model);
}
