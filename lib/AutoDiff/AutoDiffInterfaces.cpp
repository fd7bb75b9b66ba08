//===- AutoDiffInterfaces.cpp - reverse-mode rules as interfaces ----------===//
//
// The generated interface definitions and the registration of all of
// FTPipe's rules (the per-dialect rules live in *Rules.cpp).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/AutoDiff/AutoDiffInterfaces.h"

#include "FTPipe/AutoDiff/AutoDiffInterfaces.cpp.inc"

void mlir::ftpipe::autodiff::registerAllRules(DialectRegistry &registry) {
  registerTosaRules(registry);
  registerLinalgRules(registry);
  registerTensorRules(registry);
  registerArithMathRules(registry);
}
