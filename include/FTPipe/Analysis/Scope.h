//===- Scope.h - Module scope paths of ops ----------------------*- C++ -*-===//
//
// Every op gets a scope path in FTPipe's tracer format
// (`T5ForConditionalGeneration/T5Stack[encoder]/.../Linear[q]`), read from its
// NameLoc. Ops of foreign IR that carry no scope get a structural one, so
// coarsening by prefix always has something to work on.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_ANALYSIS_SCOPE_H
#define FTPIPE_ANALYSIS_SCOPE_H

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir {
namespace ftpipe {

/// The scope path of `op`: the name of its NameLoc (looking through fused and
/// call-site locations), else the structural name
/// `func.func[<function>]/<op name>[<index>]`, where `index` is the op's
/// position in its function body.
std::string getOpScope(Operation *op, StringRef functionName, unsigned index);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_ANALYSIS_SCOPE_H
