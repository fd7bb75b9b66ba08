//===- RuleTestUtil.h - Contexts and rule lists of the tests ----*- C++ -*-===//
//
// A context that holds every dialect lib/AutoDiff has rules for (and the
// dialects the CPU lowering makes), and the list of ops that have a rule,
// read from the registered interfaces rather than written down, so that a
// test checked against it notices a rule added without a test.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_UNITTESTS_AUTODIFF_RULETESTUTIL_H
#define FTPIPE_UNITTESTS_AUTODIFF_RULETESTUTIL_H

#include "FTPipe/AutoDiff/AutoDiffInterfaces.h"
#include "FTPipe/Conversion/CPUPipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include <set>
#include <string>

namespace mlir {
namespace ftpipe {
namespace autodiff {
namespace test {

/// Every dialect with rules and what lowering them to the CPU needs, loaded.
inline void initRuleContext(MLIRContext &context) {
  DialectRegistry registry;
  registerCPULoweringDialects(registry);
  registerAllRules(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
}

/// The names of the ops of `context` with a reverse-mode rule
/// (ReverseModeOpInterface) or a scalar tangent rule
/// (ScalarTangentOpInterface).
inline std::set<std::string> opsWithRules(MLIRContext &context) {
  std::set<std::string> names;
  for (RegisteredOperationName name : context.getRegisteredOperations())
    if (name.hasInterface<ReverseModeOpInterface>() ||
        name.hasInterface<ScalarTangentOpInterface>())
      names.insert(name.getStringRef().str());
  return names;
}

} // namespace test
} // namespace autodiff
} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_UNITTESTS_AUTODIFF_RULETESTUTIL_H
